#include "kernel/nl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/nlwalk.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

/* Foreign datagrams read and dropped in one receive before it gives up
 * (EAGAIN): a sender flooding the socket gets the caller's loop back, not a
 * reader that never returns. */
#define FOREIGN_MAX 64

/* ---- the real socket ------------------------------------------------------ */

/* The real socket's ctx is its struct ng_nl (ng_nl_move keeps it so). */
static ssize_t sock_sendmsg(void *ctx, const struct msghdr *msg)
{
	const struct ng_nl *nl = ctx;

	return sendmsg(nl->fd, msg, 0);
}

/* One datagram off `fd`, without waiting, and the port id that sent it. */
static ssize_t fd_recv(int fd, void *buf, size_t len, uint32_t *sender)
{
	struct sockaddr_nl from = {0};
	struct iovec iov = {buf, len};
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);

	*sender = msg.msg_namelen >= sizeof(from) && from.nl_family == AF_NETLINK ? from.nl_pid
										  : NG_NL_NO_SENDER;
	return n;
}

static ssize_t sock_recv(void *ctx, void *buf, size_t len, int timeout_ms, uint32_t *sender)
{
	const struct ng_nl *nl = ctx;
	struct pollfd p = {.fd = nl->fd, .events = POLLIN};
	int rc = poll(&p, 1, timeout_ms);

	if (rc == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (rc < 0)
		return -1; /* EINTR included: the caller decides */
	return fd_recv(p.fd, buf, len, sender);
}

static const struct ng_nl_ops sock_ops = {sock_sendmsg, sock_recv};

/* ---- the kernel's datagrams only ---------------------------------------- */

typedef ssize_t (*rx_fn)(void *ctx, void *buf, size_t len, int timeout_ms, uint32_t *sender);

/* In a pod's namespace a process with CAP_NET_ADMIN can send to any port
 * id there, and the agent's queue and event sockets live there: a forged
 * queue "packet" would otherwise teach the agent addresses (into the
 * node-side table, which NET_ADMIN in the pod cannot touch), a forged link
 * reply would name another device as the pod's host side. */
static ssize_t kernel_only(rx_fn rx, void *ctx, void *buf, size_t len, int timeout_ms)
{
	int64_t end = ng_mono_ms() + timeout_ms;

	if (len <= NLMSG_ALIGNTO) {
		errno = EINVAL;
		return -1;
	}
	for (int foreign = 0; foreign < FOREIGN_MAX; foreign++) {
		int64_t left = end - ng_mono_ms();
		uint32_t sender = NG_NL_NO_SENDER;
		/* The last NLMSG_ALIGNTO bytes stay free for the padding that an
		 * unaligned last message lacks (base/nlwalk.h). */
		ssize_t n = rx(ctx, buf, len - NLMSG_ALIGNTO, left > 0 ? (int)left : 0, &sender);

		if (n >= 0)
			memset((char *)buf + n, 0, NLMSG_ALIGNTO);
		if (n < 0 || sender == 0)
			return n;
		/* Not the kernel's (or no sender address at all): never read. */
	}
	errno = EAGAIN;
	return -1;
}

static ssize_t fd_rx(void *ctx, void *buf, size_t len, int timeout_ms, uint32_t *sender)
{
	(void)timeout_ms;
	return fd_recv(*(const int *)ctx, buf, len, sender);
}

ssize_t ng_nl_recv_kernel(int fd, void *buf, size_t len)
{
	return kernel_only(fd_rx, &fd, buf, len, 0);
}

ssize_t ng_nl_recv(struct ng_nl *nl, void *buf, size_t len, int timeout_ms)
{
	return kernel_only(nl->ops->recv, nl->ctx, buf, len, timeout_ms);
}

/* ---- opening ---------------------------------------------------------------- */

static const char *proto_name(const struct ng_nl *nl)
{
	switch (nl->protocol) {
	case NETLINK_ROUTE: return "rtnetlink";
	case NETLINK_SOCK_DIAG: return "sock_diag";
	default: return "netfilter";
	}
}

/* For "cannot open ... socket". */
static const char *socket_name(int protocol)
{
	switch (protocol) {
	case NETLINK_ROUTE: return "an rtnetlink";
	case NETLINK_SOCK_DIAG: return "a sock_diag netlink";
	default: return "a netfilter netlink";
	}
}

int ng_nl_open_proto(struct ng_nl *nl, int protocol, unsigned group, struct ng_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	socklen_t salen = sizeof(sa);
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->protocol = protocol;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
	if (nl->fd < 0) {
		int e = errno;

		/* EPROTONOSUPPORT: nfnetlink is not in this kernel at all. */
		return ng_fail(err, NG_E_KERNEL, "cannot open %s socket: %s%s", socket_name(protocol),
			       strerror(e),
			       e == EPROTONOSUPPORT && protocol == NETLINK_NETFILTER
				       ? " (kernel built without nf_tables?)"
				       : "");
	}
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(nl->fd, (struct sockaddr *)&sa, &salen) < 0 ||
	    (group && setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)) {
		int e = errno;

		close(nl->fd);
		nl->fd = -1;
		if (group)
			return ng_fail(err, NG_E_KERNEL, "cannot join %s netlink group %u: %s",
				       proto_name(nl), group, strerror(e));
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

int ng_nl_open(struct ng_nl *nl, struct ng_err *err)
{
	return ng_nl_open_proto(nl, NETLINK_NETFILTER, 0, err);
}

void ng_nl_init_ops(struct ng_nl *nl, const struct ng_nl_ops *ops, void *ctx)
{
	memset(nl, 0, sizeof(*nl));
	nl->fd = -1;
	nl->protocol = NETLINK_NETFILTER;
	nl->ops = ops;
	nl->ctx = ctx;
	nl->seq = 1;
}

void ng_nl_move(struct ng_nl *to, struct ng_nl *from)
{
	*to = *from;
	if (from->ctx == from)
		to->ctx = to;
	from->fd = -1;
}

void ng_nl_close(struct ng_nl *nl)
{
	if (nl->fd >= 0)
		close(nl->fd);
	nl->fd = -1;
}

void ng_nl_rcvbuf(struct ng_nl *nl, int bytes)
{
	if (nl->fd < 0)
		return;
	if (setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0)
		setsockopt(nl->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
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

/* nf_tables' errnos have texts of their own; rtnetlink's are plain. */
static const char *errtext(const struct ng_nl *nl, int e)
{
	return nl->protocol == NETLINK_NETFILTER ? ng_nl_strerror(e) : strerror(e);
}

/* ---- acks ------------------------------------------------------------------- */

bool ng_nl_parse_status(const struct nlmsghdr *nlh, struct ng_nl_status *st)
{
	size_t hlen;
	const struct nlattr *attr;

	st->seq = nlh->nlmsg_seq;
	st->error = 0;
	st->extack[0] = '\0';
	if (nlh->nlmsg_type == NLMSG_DONE) {
		int e = 0;

		/* The dump's own result: 0 when it completed, -errno when the
		 * kernel gave up on it part way. */
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(e))
			return true;
		memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
		st->error = e < 0 ? -e : 0;
		hlen = sizeof(e);
	} else {
		const struct nlmsgerr *e;

		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
			return false;
		e = mnl_nlmsg_get_payload(nlh);
		st->error = e->error < 0 ? -e->error : e->error;
		hlen = sizeof(*e);
		/* Without NLM_F_CAPPED the original request follows the header. */
		if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && !(nlh->nlmsg_flags & NLM_F_CAPPED)) {
			if (e->msg.nlmsg_len < sizeof(struct nlmsghdr) ||
			    hlen + e->msg.nlmsg_len > mnl_nlmsg_get_payload_len(nlh))
				return true;
			hlen += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
		}
	}
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return true;
	mnl_attr_for_each(attr, nlh, hlen) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(st->extack, sizeof(st->extack), "%s", mnl_attr_get_str(attr));
	}
	return true;
}

/* ---- one request and its replies ---------------------------------------- */

/* Sends req and reads its replies to their end, each through cb. 0; 1 when
 * the kernel answered an error (in *st); -EINTR when it marked the dump
 * interrupted; -1 with err (our side failed, or cb did). Once something
 * went wrong the rest is still read, unparsed, up to the end the kernel
 * sends: only a transport failure (a timeout, a truncated datagram) leaves
 * replies behind, and those carry a sequence number no later request has. */
static int exchange(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data,
		    struct ng_nl_status *st, struct ng_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct iovec iov = {.iov_base = req, .iov_len = req->nlmsg_len};
	struct msghdr msg = {.msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1};
	char *buf = malloc(NG_NL_RECV_BUF);
	bool intr = false, failed = false;
	int rc = -1;

	nl->answer_errno = 0;
	if (!buf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	req->nlmsg_seq = nl->seq++;
	if (nl->ops->sendmsg(nl->ctx, &msg) < 0) {
		ng_fail(err, NG_E_KERNEL, "%s request: %s", proto_name(nl), errtext(nl, errno));
		goto out;
	}
	for (;;) {
		ssize_t len = ng_nl_recv(nl, buf, NG_NL_RECV_BUF, NG_NL_TIMEOUT_MS);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		size_t left = len > 0 ? (size_t)len : 0;

		if (len < 0 && errno == EINTR)
			continue;
		if (len < 0 && errno == ENOBUFS && (req->nlmsg_flags & NLM_F_DUMP)) {
			/* A part of the dump was lost (the kernel could not queue
			 * it), the rest still comes: read to its end, then the
			 * dump counts as interrupted (read again). */
			intr = true;
			continue;
		}
		if (len <= 0) {
			ng_fail(err, NG_E_TRY_AGAIN, "reading a %s reply: %s", proto_name(nl),
				len == 0 ? "socket closed" : strerror(errno));
			goto out;
		}
		for (; ng_nlmsg_ok(nlh, left); nlh = ng_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_seq != req->nlmsg_seq ||
			    (nl->portid && nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid))
				continue; /* a late reply to an earlier request */
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true; /* the rest is read, never used */
			if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
				if (!ng_nl_parse_status(nlh, st)) {
					ng_fail(err, NG_E_KERNEL, "malformed %s reply", proto_name(nl));
					goto out;
				}
				rc = failed ? -1 : st->error ? 1 : intr ? -EINTR : 0;
				goto out;
			}
			if (!failed && !intr && cb) {
				int r = cb(nlh, data);

				if (r == NG_NL_STOP) {
					/* The caller has what it wanted: the rest of
					 * the dump stays with the kernel (nl.h). */
					nl->dump_left = true;
					rc = 0;
					goto out;
				}
				if (r < 0)
					failed = true; /* cb put why in err */
			}
		}
		if (left > 0) { /* a message longer than what is left */
			ng_fail(err, NG_E_KERNEL, "truncated %s reply", proto_name(nl));
			goto out;
		}
	}
out:
	if (rc == 1)
		nl->answer_errno = st->error;
	free(buf);
	return rc;
}

int ng_nl_request(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	struct ng_nl_status st = {0};
	int rc;

	req->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	rc = exchange(nl, req, cb, data, &st, err);
	if (rc == 1)
		return ng_fail(err, NG_E_KERNEL, "%s%s%s", errtext(nl, st.error), st.extack[0] ? ": " : "",
			       st.extack);
	if (rc == -EINTR)
		return ng_fail(err, NG_E_TRY_AGAIN, "%s: the answer changed while it was read",
			       proto_name(nl));
	return rc;
}

/* Reads and drops whatever the socket holds, without waiting: each read
 * lets the kernel go on with a dump left unfinished (NG_NL_STOP, a reader
 * that gave up), to its end. */
static void drain_dump(struct ng_nl *nl)
{
	char *buf = malloc(NG_NL_RECV_BUF);

	for (int i = 0; buf && i < 100000; i++) {
		ssize_t n = ng_nl_recv(nl, buf, NG_NL_RECV_BUF, 0);

		if (n <= 0 && errno != ENOBUFS && errno != EINTR)
			break;
	}
	free(buf);
	nl->dump_left = false;
}

int ng_nl_dump(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	struct ng_nl_status st = {0};
	int rc = 1;

	/* EBUSY: the socket still runs an earlier dump (one left unfinished,
	 * or whose reader gave up on a timeout or an overrun): drain it and
	 * ask again, a bounded number of times (NG_NL_BUSY_TRIES). */
	for (int attempt = 0; attempt < NG_NL_BUSY_TRIES; attempt++) {
		if (attempt > 0)
			ng_nl_read_pause(attempt);
		if (nl->dump_left || attempt > 0)
			drain_dump(nl);
		memset(&st, 0, sizeof(st));
		rc = exchange(nl, req, cb, data, &st, err);
		if (rc != 1 || st.error != EBUSY || !(req->nlmsg_flags & NLM_F_DUMP))
			break;
	}

	if (rc == 1 && st.error == ENOENT)
		return -ENOENT;
	if (rc == 1)
		return ng_fail(err, NG_E_KERNEL, "%s dump: %s%s%s", proto_name(nl), errtext(nl, st.error),
			       st.extack[0] ? ": " : "", st.extack);
	if (rc == -EINTR)
		ng_fail(err, NG_E_TRY_AGAIN, "%s",
			nl->protocol == NETLINK_ROUTE ? "the links or addresses changed during the dump"
						      : "the ruleset changed during the dump");
	return rc;
}

void ng_nl_read_pause(int attempt)
{
	struct timespec ts = {0, (long)(1 + attempt % 10) * 1000000L};

	nanosleep(&ts, NULL);
}

int ng_nl_read_again(struct ng_nl *nl, int (*read)(struct ng_nl *nl, void *data, struct ng_err *err),
		     void *data, struct ng_err *err)
{
	int rc = -EINTR;

	for (int attempt = 0; attempt < NG_NL_READ_TRIES && rc == -EINTR; attempt++) {
		if (attempt > 0) {
			if (err)
				memset(err, 0, sizeof(*err));
			ng_nl_read_pause(attempt);
		}
		rc = read(nl, data, err);
	}
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
