#include "kernel/nl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/nlwalk.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define RECV_TIMEOUT_MS 10000
/* Large enough for any single reply, including a dump batch of rules. */
#define RECV_BUF        (MNL_SOCKET_BUFFER_SIZE * 16)

/* ---- the real socket ------------------------------------------------------ */

static ssize_t sock_sendmsg(void *ctx, const struct msghdr *msg)
{
	struct ng_nl *nl = ctx;

	return sendmsg(nl->fd, msg, 0);
}

ssize_t ng_nl_recv_kernel(int fd, void *buf, size_t len)
{
	/* Bounded: a sender flooding the socket gets EAGAIN back to the
	 * caller's loop, not a reader that never returns. */
	if (len <= NLMSG_ALIGNTO) {
		errno = EINVAL;
		return -1;
	}
	for (int foreign = 0; foreign < 64; foreign++) {
		struct sockaddr_nl from = {0};
		/* The last NLMSG_ALIGNTO bytes stay free for the padding that an
		 * unaligned last message lacks (base/nlwalk.h). */
		struct iovec iov = {buf, len - NLMSG_ALIGNTO};
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);

		if (n >= 0)
			memset((char *)buf + n, 0, NLMSG_ALIGNTO);
		if (n < 0 ||
		    (msg.msg_namelen >= sizeof(from) && from.nl_family == AF_NETLINK && from.nl_pid == 0))
			return n;
		/* Not the kernel's (or no sender address at all): never read. */
	}
	errno = EAGAIN;
	return -1;
}

void ng_nl_read_pause(int attempt)
{
	struct timespec ts = {0, (long)(1 + attempt % 10) * 1000000L};

	nanosleep(&ts, NULL);
}

static ssize_t sock_recv(void *ctx, void *buf, size_t len)
{
	struct ng_nl *nl = ctx;
	struct pollfd p = {.fd = nl->fd, .events = POLLIN};
	int rc;

	do {
		rc = poll(&p, 1, RECV_TIMEOUT_MS);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (rc < 0)
		return -1;
	return ng_nl_recv_kernel(nl->fd, buf, len);
}

static const struct ng_nl_ops sock_ops = {sock_sendmsg, sock_recv};

int ng_nl_open(struct ng_nl *nl, struct ng_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	socklen_t salen = sizeof(sa);
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (nl->fd < 0) {
		int e = errno;

		/* EPROTONOSUPPORT: nfnetlink is not in this kernel at all. */
		return ng_fail(err, NG_E_KERNEL, "cannot open a netfilter netlink socket: %s%s", strerror(e),
			       e == EPROTONOSUPPORT ? " (kernel built without nf_tables?)" : "");
	}
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen) < 0) {
		int e = errno;

		close(nl->fd);
		nl->fd = -1;
		return ng_fail(err, NG_E_KERNEL, "cannot bind the netlink socket: %s", strerror(e));
	}
	/* Extended acks carry the kernel's own message ("Set not found", ...);
	 * capped acks keep each reply small instead of echoing our request. */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = sa.nl_pid;
	nl->ops = &sock_ops;
	nl->ctx = nl;
	nl->seq = 1;
	return 0;
}

void ng_nl_init_ops(struct ng_nl *nl, const struct ng_nl_ops *ops, void *ctx)
{
	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	nl->ops = ops;
	nl->ctx = ctx;
	nl->seq = 1;
}

void ng_nl_close(struct ng_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

const char *ng_nl_strerror(int e)
{
	switch (e) {
	case EPERM:
		return "operation not permitted (the plugin needs CAP_NET_ADMIN over the pod's network "
		       "namespace)";
	case EOPNOTSUPP:
		return "operation not supported by this kernel (a needed nf_tables feature or module is "
		       "missing)";
	case ENOENT: return "no such object";
	case EEXIST: return "object already exists";
	case ENOTEMPTY: return "overlapping set elements";
	case EBUSY: return "device or resource busy (another transaction is in progress)";
	default: return strerror(e);
	}
}

/* ---- acks ------------------------------------------------------------------- */

struct reply {
	uint32_t seq;
	int error;        /* positive errno, 0 for an ack */
	char extack[256]; /* the kernel's message, if any */
};

/* Parses an NLMSG_ERROR message; returns false when it is malformed. */
static bool parse_error(const struct nlmsghdr *nlh, struct reply *r)
{
	const struct nlmsgerr *e;
	size_t hlen = sizeof(*e);
	const struct nlattr *attr;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
		return false;
	e = mnl_nlmsg_get_payload(nlh);
	r->seq = nlh->nlmsg_seq;
	r->error = e->error < 0 ? -e->error : e->error;
	r->extack[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return true;
	/* Without NLM_F_CAPPED the original request follows the header. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr) ||
		    hlen + e->msg.nlmsg_len > mnl_nlmsg_get_payload_len(nlh))
			return true;
		hlen += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	mnl_attr_for_each(attr, nlh, hlen) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(r->extack, sizeof(r->extack), "%s", mnl_attr_get_str(attr));
	}
	return true;
}

/* The batch was processed (sendmsg returned) but its outcome is not known:
 * a reply went missing. Never retried as it stands: an exclusive create
 * that did apply would then fail EEXIST and its answer be taken for the
 * first one's (kernel/ruleset.c removes the table instead). */
static int unknown(struct ng_nl *nl, struct ng_err *err, const char *why)
{
	nl->outcome = NG_NL_UNKNOWN;
	return ng_fail(err, NG_E_TRY_AGAIN, "netfilter transaction: %s; its outcome is unknown", why);
}

/* Reads what is already queued without waiting and drops it: replies to
 * requests this socket gave up on must not fill the buffer the next
 * transaction's error replies need (and a pending ENOBUFS is cleared). */
static void drain(struct ng_nl *nl, char *buf)
{
	if (nl->fd < 0)
		return;
	for (int i = 0; i < 100000; i++)
		if (recv(nl->fd, buf, RECV_BUF, MSG_DONTWAIT) < 0 && errno != ENOBUFS && errno != EINTR)
			return;
}

/* The marker: a GETGEN request with an ack, sent after the batch. The
 * kernel processes a batch inside our sendmsg() and answers requests in
 * order, so once the marker's ack is read, every error the batch caused has
 * been read before it: no error seen means the whole batch was applied. */
static int send_marker(struct ng_nl *nl, uint32_t seq)
{
	char buf[64];
	struct nlmsghdr *nlh;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct iovec iov;
	struct msghdr msg = {.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};

	memset(buf, 0, sizeof(buf));
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, NLM_F_ACK, seq);
	iov = (struct iovec){.iov_base = nlh, .iov_len = nlh->nlmsg_len};
	for (int attempt = 0; attempt < 100; attempt++) {
		if (nl->ops->sendmsg(nl->ctx, &msg) >= 0)
			return 0;
		if (errno != EINTR && errno != EAGAIN && errno != ENOBUFS)
			return -1;
		if (attempt > 0)
			poll(NULL, 0, 10); /* memory pressure: wait a little */
	}
	return -1;
}

int ng_nl_batch_init(struct ng_nl *nl, struct ng_batch *b, const char *table, struct ng_err *err)
{
	return ng_batch_init(b, table, nl->seq, err);
}

int ng_nl_commit(struct ng_nl *nl, const struct ng_batch *b, struct ng_err *err)
{
	int n = nftnl_batch_iovec_len(b->nb);
	struct iovec iov[n > 0 ? n : 1];
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct msghdr msg = {.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = iov};
	uint32_t want = ng_batch_count(b), marker = b->seq_begin + want + 2, errors = 0;
	struct reply fail = {0};
	bool overrun = false, done = false;
	char *buf = malloc(RECV_BUF);
	size_t total = 0;
	int rc = -1;

	nl->refused_errno = 0;
	nl->outcome = NG_NL_NOT_SENT;
	/* The next request is numbered past this batch, its END and the
	 * marker, whatever becomes of it: a retry never takes a late reply of
	 * this attempt for its own. */
	if (nl->seq <= marker)
		nl->seq = marker + 1;
	if (!buf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	nftnl_batch_iovec(b->nb, iov, (uint32_t)n);
	msg.msg_iovlen = (size_t)n;
	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (total > NG_NL_BATCH_MAX) {
		ng_fail(err, NG_E_CONFIG,
			"the ruleset is too large: %zu bytes in one transaction, the limit is %zu (README "
			"\"Limits\"); nothing was sent",
			total, (size_t)NG_NL_BATCH_MAX);
		goto out;
	}
	if (nl->fd >= 0) {
		/* The whole batch is one datagram: the send buffer must hold it.
		 * Replies are only errors and the marker's two: the first error is
		 * always queued (the buffer is empty then), and later ones that
		 * overflow it change nothing (the kernel aborted anyway). FORCE
		 * needs CAP_NET_ADMIN; without it the defaults still work. */
		int snd = (int)total + 65536, rcv = 4 << 20;

		drain(nl, buf);
		if (setsockopt(nl->fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)) < 0)
			setsockopt(nl->fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
		if (setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
			setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	}

	if (nl->ops->sendmsg(nl->ctx, &msg) < 0) {
		int e = errno;

		/* The kernel saw nothing: the same batch may be sent again. */
		if (e == ENOBUFS || e == EINTR || e == EAGAIN || e == ENOMEM)
			ng_fail(err, NG_E_TRY_AGAIN, "sending the netfilter transaction (%zu bytes): %s",
				total, strerror(e));
		else
			ng_fail(err, NG_E_KERNEL, "sending the netfilter transaction (%zu bytes): %s", total,
				ng_nl_strerror(e));
		goto out;
	}
	nl->outcome = NG_NL_UNKNOWN;
	if (send_marker(nl, marker) < 0) {
		unknown(nl, err, "the request that ends it could not be sent");
		goto out;
	}

	while (!done) {
		ssize_t len = nl->ops->recv(nl->ctx, buf, RECV_BUF);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		size_t left = len > 0 ? (size_t)len : 0;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && errno == ENOBUFS) {
			/* Only failures are answered: an overrun means the kernel
			 * refused the batch. The first error came first, into an
			 * empty buffer, so `fail` holds it. */
			overrun = true;
			break;
		}
		if (len < 0) {
			unknown(nl, err,
				errno == EAGAIN ? "no reply from the kernel in time" : strerror(errno));
			goto out;
		}
		if (len == 0 || !ng_nlmsg_ok(nlh, left)) {
			unknown(nl, err, len == 0 ? "netlink socket closed" : "truncated reply");
			goto out;
		}
		for (; ng_nlmsg_ok(nlh, left); nlh = ng_nlmsg_next(nlh, &left)) {
			struct reply r;

			if (nl->portid && nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid)
				continue;
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue; /* the marker's NEWGEN, or anything else: not an answer */
			if (!parse_error(nlh, &r)) {
				unknown(nl, err, "malformed reply");
				goto out;
			}
			if (r.seq == marker) {
				done = true; /* everything before it has been read */
				break;
			}
			if (r.seq == b->seq_begin || r.seq == b->seq_begin + want + 1) {
				/* An error on BEGIN/END: the kernel refused the batch as
				 * a whole (most often EPERM) and processed nothing. */
				nl->outcome = NG_NL_REFUSED;
				ng_fail(err, NG_E_KERNEL, "netfilter refused the transaction (%s): %s%s%s",
					ng_batch_describe(b, r.seq), ng_nl_strerror(r.error),
					r.extack[0] ? ": " : "", r.extack);
				goto out;
			}
			if (r.seq <= b->seq_begin || r.seq > b->seq_begin + want || !r.error)
				continue; /* not ours (a stale reply), or an ack nobody asked for */
			if (errors++ == 0)
				fail = r;
		}
	}
	if (errors || overrun) {
		nl->outcome = NG_NL_REFUSED;
		nl->refused_errno = fail.error;
		nl->refused_index = errors ? fail.seq - b->seq_begin - 1 : 0;
		if (!errors)
			ng_fail(err, NG_E_KERNEL,
				"the kernel refused the transaction; its error replies overran the receive "
				"buffer (nothing was applied)");
		else
			ng_fail(err, NG_E_KERNEL, "the kernel refused %s: %s%s%s (nothing was applied%s)",
				ng_batch_describe(b, fail.seq), ng_nl_strerror(fail.error),
				fail.extack[0] ? ": " : "", fail.extack,
				overrun || errors > 1 ? "; further errors followed" : "");
		goto out;
	}
	nl->outcome = NG_NL_APPLIED;
	rc = 0;
out:
	free(buf);
	return rc;
}

/* ---- dumps ------------------------------------------------------------------ */

int ng_nl_dump(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct iovec iov = {.iov_base = req, .iov_len = req->nlmsg_len};
	struct msghdr msg = {.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};
	uint32_t seq = nl->seq++;
	char *buf = malloc(RECV_BUF);
	int rc = -1;

	if (!buf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	req->nlmsg_seq = seq;
	if (nl->ops->sendmsg(nl->ctx, &msg) < 0) {
		ng_fail(err, NG_E_KERNEL, "netlink request: %s", ng_nl_strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t len = nl->ops->recv(nl->ctx, buf, RECV_BUF);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		size_t left = len > 0 ? (size_t)len : 0;

		if (len < 0 && errno == EINTR)
			continue;
		if (len <= 0) {
			ng_fail(err, NG_E_TRY_AGAIN, "reading a netfilter dump: %s",
				len == 0 ? "socket closed" : strerror(errno));
			goto out;
		}
		for (; ng_nlmsg_ok(nlh, left); nlh = ng_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
				ng_fail(err, NG_E_TRY_AGAIN, "the ruleset changed during the dump");
				rc = -EINTR;
				goto out;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				rc = 0;
				goto out;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct reply r;

				if (!parse_error(nlh, &r)) {
					ng_fail(err, NG_E_KERNEL, "malformed netlink error");
					goto out;
				}
				if (r.error == 0) { /* the ack of a non-dump request */
					rc = 0;
					goto out;
				}
				if (r.error == ENOENT) {
					rc = -ENOENT;
					goto out;
				}
				ng_fail(err, NG_E_KERNEL, "netfilter dump: %s%s%s", ng_nl_strerror(r.error),
					r.extack[0] ? ": " : "", r.extack);
				goto out;
			}
			if (cb(nlh, data) < 0)
				goto out;
			if (!(req->nlmsg_flags & NLM_F_DUMP)) {
				/* A single-object GET: the reply, then an ack. */
				continue;
			}
		}
		if (left > 0) { /* a message longer than what is left */
			ng_fail(err, NG_E_KERNEL, "truncated netlink reply");
			goto out;
		}
	}
out:
	free(buf);
	return rc;
}

static int genid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(attr) == NFTA_GEN_ID && mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			*(uint32_t *)data = ntohl(mnl_attr_get_u32(attr));
	}
	return 0;
}

uint32_t ng_nl_genid(struct ng_nl *nl)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	uint32_t gen = 0;

	/* libmnl leaves attribute padding as it finds it: never send stack bytes. */
	memset(buf, 0, sizeof(buf));
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, NLM_F_ACK, 0);

	if (ng_nl_dump(nl, nlh, genid_cb, &gen, NULL) < 0)
		return 0;
	return gen;
}
