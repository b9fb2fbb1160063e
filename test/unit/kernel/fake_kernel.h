/* A fake kernel for the netlink transport's tests: it answers sendmsg and
 * recv as a scenario says (an error on the k-th message, lost replies,
 * EINTR, refused batches), so every path of kernel/nl.c runs without root.
 * Below it, a fake socket for request/answer protocols (struct fsock):
 * each message sent is kept and answered by a function of the test's
 * world, into a queue of datagrams that each carry their sender, so a
 * forger in the pod's namespace can be played too (fake_rtnl.h plays
 * rtnetlink on it). */
#ifndef NG_TEST_FAKE_KERNEL_H
#define NG_TEST_FAKE_KERNEL_H

#include "testutil.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/uio.h> // IWYU pragma: export

#include "kernel/nlcommit.h"
#include "nft/render.h"
#include "kernel/ruleset.h" // IWYU pragma: export

#define MAXMSG 512

/* What the fake kernel does with the next batch. */

struct scenario {
	int fail_index; /* body message (0-based) answered with an error, -1: none */
	int fail_errno;
	const char *extack;
	int refuse_errno; /* answer BEGIN with this error (whole batch refused) */
	int send_errno;   /* sendmsg fails with this */
	int lose_after;   /* recv fails with lose_errno after this many replies, -1: never */
	int lose_errno;
	int no_marker;   /* the marker is never answered (a timeout) */
	int fail_count;  /* body messages from fail_index on answered with an error (default 1) */
	int eintr_once;  /* first recv fails with EINTR */
	int truncate;    /* the first reply buffer is cut short */
	int stale_first; /* a reply for an unknown sequence number comes first */
	int one_buffer;  /* all replies in one recv */
};

struct fake {
	struct scenario sc[4]; /* one per attempt */
	int attempt;
	int sends, batches;
	int acks_asked; /* body messages that carried NLM_F_ACK */
	uint32_t marker_seq;
	uint16_t marker_type;
	/* the last batch as the kernel saw it */
	uint32_t seqs[MAXMSG];
	uint16_t types[MAXMSG];
	int nmsg;
	/* queued replies */
	uint8_t replies[MAXMSG][128];
	size_t reply_len[MAXMSG];
	int nreplies, next_reply;
	int eintr_done;
};

__attribute__((unused)) static size_t put_error(uint8_t *buf, uint32_t seq, int error, const char *extack)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -error;
	if (extack) {
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, extack);
	}
	return nlh->nlmsg_len;
}

__attribute__((unused)) static void queue(struct fake *f, uint32_t seq, int error, const char *extack)
{
	f->reply_len[f->nreplies] = put_error(f->replies[f->nreplies], seq, error, extack);
	f->nreplies++;
}

__attribute__((unused)) static ssize_t fake_sendmsg(void *ctx, const struct msghdr *msg)
{
	struct fake *f = ctx;
	const struct nlmsghdr *first = msg->msg_iov[0].iov_base;
	struct scenario *sc;

	/* A table read (ADD asks whose tables are there before it replaces
	 * them): the kernel has none. Not a batch: not counted in sends. */
	if (first->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE)) {
		f->reply_len[0] = put_error(f->replies[0], first->nlmsg_seq, ENOENT, NULL);
		f->nreplies = 1;
		f->next_reply = 0;
		return 1;
	}
	f->sends++;
	if (first->nlmsg_type != NFNL_MSG_BATCH_BEGIN) {
		/* The marker: processed after the batch, answered in order. */
		sc = &f->sc[(f->attempt - 1) < 4 ? f->attempt - 1 : 3];
		f->marker_seq = first->nlmsg_seq;
		f->marker_type = first->nlmsg_type;
		if (!sc->no_marker) {
			struct nlmsghdr *gen = mnl_nlmsg_put_header(f->replies[f->nreplies]);

			gen->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWGEN;
			gen->nlmsg_seq = first->nlmsg_seq;
			f->reply_len[f->nreplies++] = gen->nlmsg_len;
			queue(f, first->nlmsg_seq, 0, NULL);
		}
		return 1;
	}
	sc = &f->sc[f->attempt < 4 ? f->attempt : 3];
	f->batches++;
	f->nmsg = 0;
	f->nreplies = f->next_reply = 0;
	f->eintr_done = 0;
	f->acks_asked = 0;
	if (sc->send_errno) {
		f->attempt++;
		errno = sc->send_errno;
		return -1;
	}
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		const struct nlmsghdr *nlh = msg->msg_iov[i].iov_base;
		int len = (int)msg->msg_iov[i].iov_len;

		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			f->seqs[f->nmsg] = nlh->nlmsg_seq;
			if (nlh->nlmsg_type != NFNL_MSG_BATCH_BEGIN &&
			    nlh->nlmsg_type != NFNL_MSG_BATCH_END && (nlh->nlmsg_flags & NLM_F_ACK))
				f->acks_asked++;
			f->types[f->nmsg++] = nlh->nlmsg_type;
		}
	}
	if (sc->stale_first)
		queue(f, 999999, 0, NULL);
	if (sc->refuse_errno) {
		queue(f, f->seqs[0], sc->refuse_errno, NULL);
	} else if (sc->fail_index >= 0) {
		/* only the failing body messages are answered */
		int n = sc->fail_count ? sc->fail_count : 1;

		for (int i = sc->fail_index; i < sc->fail_index + n && i + 1 < f->nmsg - 1; i++)
			queue(f, f->seqs[i + 1], sc->fail_errno, sc->extack);
	}
	f->attempt++;
	return 1;
}

__attribute__((unused)) static ssize_t fake_recv(void *ctx, void *buf, size_t len, int timeout_ms,
						 uint32_t *sender)
{
	struct fake *f = ctx;
	struct scenario *sc = &f->sc[(f->attempt - 1) < 4 ? f->attempt - 1 : 3];
	size_t out = 0;

	(void)timeout_ms;
	*sender = 0; /* the kernel */
	if (sc->eintr_once && !f->eintr_done) {
		f->eintr_done = 1;
		errno = EINTR;
		return -1;
	}
	if (sc->lose_after >= 0 && f->next_reply >= sc->lose_after) {
		errno = sc->lose_errno;
		return -1;
	}
	if (f->next_reply >= f->nreplies) {
		errno = EAGAIN; /* what the real socket says after its timeout */
		return -1;
	}
	do {
		memcpy((uint8_t *)buf + out, f->replies[f->next_reply], f->reply_len[f->next_reply]);
		out += f->reply_len[f->next_reply++];
	} while (sc->one_buffer && f->next_reply < f->nreplies && out + 128 < len);
	if (sc->truncate)
		return 10;
	return (ssize_t)out;
}

__attribute__((unused)) static const struct ng_nl_ops fake_ops = {fake_sendmsg, fake_recv};

__attribute__((unused)) static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	for (int i = 0; i < 4; i++) {
		f->sc[i].fail_index = -1;
		f->sc[i].lose_after = -1;
	}
	return f;
}

__attribute__((unused)) static void small_policy(struct ng_policy *p)
{
	struct ng_ip ip;

	memset(p, 0, sizeof(*p));
	ng_ip_parse("169.254.169.254", &ip);
	ng_vec_push(&p->metadata[0], &ip);
	p->raw_guard = true;
	snprintf(p->ifname, sizeof(p->ifname), "eth0");
}

/* Commits the small policy's batch through the fake; returns rc. */
__attribute__((unused)) static int commit_with(struct fake *f, struct ng_err *err, struct ng_batch *keep)
{
	struct ng_policy p;
	struct ng_batch b;
	struct ng_nl nl;
	int rc;

	small_policy(&p);
	ng_nl_init_ops(&nl, &fake_ops, f);
	memset(err, 0, sizeof(*err));
	ng_batch_init(&b, NG_TABLE, 10, err);
	ng_render_replace(&p, &b, err);
	rc = ng_nl_commit(&nl, &b, err);
	if (keep)
		*keep = b;
	else
		ng_batch_free(&b);
	ng_policy_free(&p);
	return rc;
}

/* ---- a fake socket: requests kept, answers queued with their sender ---- */

#define FS_DGRAMS 128
#define FS_DGRAM  8192
#define FS_REQS   64
#define FS_FORGER 4242 /* a process in the pod's namespace, not the kernel */

struct fsock {
	/* Answers one message the code sent (fs_msg... into the queue). */
	void (*answer)(struct fsock *s, const struct nlmsghdr *req);
	void *world;
	int send_errno; /* sendmsg fails with this */
	int recv_errno; /* the next recv fails with this, once */
	/* every message sent, in order (the first FS_REQS kept) */
	uint8_t req[FS_REQS][1024];
	int nreq;
	/* datagrams queued and not yet read: a ring, q[i % FS_DGRAMS] */
	uint8_t q[FS_DGRAMS][FS_DGRAM];
	size_t qlen[FS_DGRAMS];
	uint32_t qsender[FS_DGRAMS];
	int qhead, qtail;
};

/* Starts a datagram from `sender` (0: the kernel). */
__attribute__((unused)) static void fs_dgram(struct fsock *s, uint32_t sender)
{
	int at = s->qtail % FS_DGRAMS;

	assert_true(s->qtail - s->qhead < FS_DGRAMS);
	memset(s->q[at], 0, FS_DGRAM);
	s->qlen[at] = 0;
	s->qsender[at] = sender;
	s->qtail++;
}

/* A message at the end of the current datagram; fs_end when it is built. */
__attribute__((unused)) static struct nlmsghdr *fs_msg(struct fsock *s, uint16_t type, uint16_t flags,
						       uint32_t seq)
{
	int at = (s->qtail - 1) % FS_DGRAMS;
	struct nlmsghdr *nlh;

	assert_true(s->qtail > s->qhead && s->qlen[at] + 2048 <= FS_DGRAM);
	nlh = mnl_nlmsg_put_header(s->q[at] + s->qlen[at]);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

__attribute__((unused)) static void fs_end(struct fsock *s, const struct nlmsghdr *nlh)
{
	s->qlen[(s->qtail - 1) % FS_DGRAMS] += NLMSG_ALIGN(nlh->nlmsg_len);
}

/* An ack (error 0) or an error reply to `seq`. */
__attribute__((unused)) static void fs_ack(struct fsock *s, uint32_t seq, int error)
{
	struct nlmsghdr *nlh = fs_msg(s, NLMSG_ERROR, NLM_F_CAPPED, seq);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = -error;
	fs_end(s, nlh);
}

/* The end of a dump, its errno 0, with `flags` (NLM_F_DUMP_INTR...). */
__attribute__((unused)) static void fs_done(struct fsock *s, uint32_t seq, uint16_t flags)
{
	struct nlmsghdr *nlh = fs_msg(s, NLMSG_DONE, NLM_F_MULTI | flags, seq);
	int *e = mnl_nlmsg_put_extra_header(nlh, sizeof(int));

	*e = 0;
	fs_end(s, nlh);
}

__attribute__((unused)) static ssize_t fs_sendmsg(void *ctx, const struct msghdr *msg)
{
	struct fsock *s = ctx;
	ssize_t total = 0;

	if (s->send_errno) {
		errno = s->send_errno;
		return -1;
	}
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		const struct nlmsghdr *nlh = msg->msg_iov[i].iov_base;
		int len = (int)msg->msg_iov[i].iov_len;

		total += len;
		for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
			/* kept up to 1 KiB: a long one's first bytes */
			if (s->nreq < FS_REQS)
				memcpy(s->req[s->nreq], nlh,
				       nlh->nlmsg_len < sizeof(s->req[0]) ? nlh->nlmsg_len
									  : sizeof(s->req[0]));
			s->nreq++;
			s->answer(s, nlh);
		}
	}
	return total;
}

__attribute__((unused)) static ssize_t fs_recv(void *ctx, void *buf, size_t len, int timeout_ms,
					       uint32_t *sender)
{
	struct fsock *s = ctx;
	int at = s->qhead % FS_DGRAMS;
	size_t n;

	(void)timeout_ms;
	if (s->recv_errno) {
		errno = s->recv_errno;
		s->recv_errno = 0;
		return -1;
	}
	if (s->qhead == s->qtail) {
		errno = EAGAIN; /* what the real socket says after its timeout */
		return -1;
	}
	n = s->qlen[at] < len ? s->qlen[at] : len;
	memcpy(buf, s->q[at], n);
	*sender = s->qsender[at];
	s->qhead++;
	return (ssize_t)n;
}

__attribute__((unused)) static const struct ng_nl_ops fs_ops = {fs_sendmsg, fs_recv};

/* The k-th message sent (0-based). */
__attribute__((unused)) static const struct nlmsghdr *fs_req(const struct fsock *s, int k)
{
	assert_true(k < s->nreq && k < FS_REQS);
	return (const struct nlmsghdr *)s->req[k];
}

#endif
