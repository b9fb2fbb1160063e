#include "kernel/nlcommit.h"

#include <errno.h>
#include <libnftnl/batch.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nf_tables.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/nlwalk.h"

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
		if (recv(nl->fd, buf, NG_NL_RECV_BUF, MSG_DONTWAIT) < 0 && errno != ENOBUFS && errno != EINTR)
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
	struct ng_nl_status fail = {0};
	bool overrun = false, done = false;
	char *buf = malloc(NG_NL_RECV_BUF);
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
		int snd = (int)total + 65536;

		drain(nl, buf);
		if (setsockopt(nl->fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)) < 0)
			setsockopt(nl->fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
		ng_nl_rcvbuf(nl, 4 << 20);
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
		ssize_t len = ng_nl_recv(nl, buf, NG_NL_RECV_BUF, NG_NL_TIMEOUT_MS);
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
			struct ng_nl_status r;

			if (nl->portid && nlh->nlmsg_pid && nlh->nlmsg_pid != nl->portid)
				continue;
			if (nlh->nlmsg_type != NLMSG_ERROR)
				continue; /* the marker's NEWGEN, or anything else: not an answer */
			if (!ng_nl_parse_status(nlh, &r)) {
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
				nl->refused_errno = r.error;
				nl->refused_index = 0;
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
