/* The netlink transport against a fake kernel that answers as nfnetlink
 * does: nothing for a body message that succeeds (none asks for an ack),
 * an error for one that fails, then the marker request's NEWGEN and ack.
 * An error on the k-th message (with extended ack), a refused batch, error
 * replies that overrun the buffer (ENOBUFS), EINTR, truncation, a lost
 * marker (the outcome unknown: never retried, the table removed), stale
 * replies; and the proof that a transaction always leaves in ONE sendmsg,
 * BEGIN first and END last. */
#include "testutil.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/uio.h>

#include "kernel/nl.h"
#include "nft/render.h"
#include "kernel/ruleset.h"

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

static size_t put_error(uint8_t *buf, uint32_t seq, int error, const char *extack)
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

static void queue(struct fake *f, uint32_t seq, int error, const char *extack)
{
	f->reply_len[f->nreplies] = put_error(f->replies[f->nreplies], seq, error, extack);
	f->nreplies++;
}

static ssize_t fake_sendmsg(void *ctx, const struct msghdr *msg)
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

static ssize_t fake_recv(void *ctx, void *buf, size_t len)
{
	struct fake *f = ctx;
	struct scenario *sc = &f->sc[(f->attempt - 1) < 4 ? f->attempt - 1 : 3];
	size_t out = 0;

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

static const struct ng_nl_ops fake_ops = {fake_sendmsg, fake_recv};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	for (int i = 0; i < 4; i++) {
		f->sc[i].fail_index = -1;
		f->sc[i].lose_after = -1;
	}
	return f;
}

static void small_policy(struct ng_policy *p)
{
	struct ng_ip ip;

	memset(p, 0, sizeof(*p));
	ng_ip_parse("169.254.169.254", &ip);
	ng_vec_push(&p->metadata[0], &ip);
	p->raw_guard = true;
	snprintf(p->ifname, sizeof(p->ifname), "eth0");
}

/* Commits the small policy's batch through the fake; returns rc. */
static int commit_with(struct fake *f, struct ng_err *err, struct ng_batch *keep)
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

static void test_success_without_acks(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_err err;

	assert_int_equal(commit_with(f, &err, NULL), 0);
	assert_int_equal(f->batches, 1);
	assert_int_equal(f->sends, 2); /* the batch, then the marker */
	/* One datagram: BEGIN first, END last, everything between. */
	assert_int_equal(f->types[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(f->types[f->nmsg - 1], NFNL_MSG_BATCH_END);
	for (int i = 1; i < f->nmsg - 1; i++) {
		assert_int_equal(f->types[i] >> 8, NFNL_SUBSYS_NFTABLES);
		assert_int_equal(f->seqs[i], f->seqs[0] + (uint32_t)i); /* distinct, in order */
	}
	/* No body message asks for an ack (issue 13: 1,200 acks overran the
	 * receive buffer); the marker is a GETGEN numbered past END. */
	assert_int_equal(f->acks_asked, 0);
	assert_int_equal(f->marker_type, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN);
	assert_true(f->marker_seq > f->seqs[f->nmsg - 1]);
	free(f);

	f = fake_new();
	f->sc[0].one_buffer = 1;
	assert_int_equal(commit_with(f, &err, NULL), 0);
	free(f);
}

static void test_error_on_kth_message(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_batch b;
	struct ng_err err;

	/* Fail the 5th body message; the error must name that object. */
	f->sc[0].fail_index = 4;
	f->sc[0].fail_errno = EINVAL;
	f->sc[0].extack = "Set not found";
	assert_int_equal(commit_with(f, &err, &b), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg, ng_batch_describe(&b, f->seqs[5]));
	assert_contains(err.msg, "Set not found");
	assert_contains(err.msg, "Invalid argument");
	assert_contains(err.msg, "nothing was applied");
	ng_batch_free(&b);
	free(f);

	/* An error on a rule names the rule by its purpose. */
	f = fake_new();
	f->sc[0].fail_errno = EOPNOTSUPP;
	struct ng_batch b2;
	assert_int_equal(commit_with(f, &err, &b2), 0); /* learn the layout first */
	int rule = -1;
	for (int i = 1; i < f->nmsg - 1 && rule < 0; i++)
		if (strstr(ng_batch_describe(&b2, f->seqs[i]), "cloud metadata (IPv4)"))
			rule = i - 1;
	ng_batch_free(&b2);
	assert_true(rule >= 0);
	free(f);
	f = fake_new();
	f->sc[0].fail_index = rule;
	f->sc[0].fail_errno = EOPNOTSUPP;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_contains(err.msg, "rule in chain egress: cloud metadata (IPv4)");
	assert_contains(err.msg, "not supported by this kernel");
	free(f);
}

static void test_batch_refused(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_err err;

	f->sc[0].refuse_errno = EPERM;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg, "refused the transaction");
	assert_contains(err.msg, "CAP_NET_ADMIN");
	free(f);
}

static void test_lost_replies(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_err err;

	/* Error replies overran the buffer: the kernel refused the batch, and
	 * the first error (queued into an empty buffer) is the one named. */
	f->sc[0].fail_index = 2;
	f->sc[0].fail_count = 5;
	f->sc[0].fail_errno = EINVAL;
	f->sc[0].lose_after = 1;
	f->sc[0].lose_errno = ENOBUFS;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg, "nothing was applied; further errors followed");
	free(f);

	f = fake_new();
	f->sc[0].lose_after = 0;
	f->sc[0].lose_errno = ENOBUFS;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg, "overran the receive buffer");
	free(f);

	/* The marker never answered: the outcome is unknown. */
	f = fake_new();
	f->sc[0].no_marker = 1;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "no reply from the kernel in time; its outcome is unknown");
	free(f);

	f = fake_new();
	f->sc[0].truncate = 1;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "truncated");
	free(f);
}

static void test_eintr_and_stale(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_err err;

	f->sc[0].eintr_once = 1;
	f->sc[0].stale_first = 1;
	assert_int_equal(commit_with(f, &err, NULL), 0);
	free(f);
}

static void test_send_errors(void **state)
{
	(void)state;
	struct fake *f = fake_new();
	struct ng_err err;

	f->sc[0].send_errno = EPERM;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	free(f);
	f = fake_new();
	f->sc[0].send_errno = ENOBUFS;
	assert_int_equal(commit_with(f, &err, NULL), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	free(f);
}

/* ng_ruleset_apply sends a batch again only when the kernel never saw it
 * (the send failed), renumbered; never after a refusal; and when the
 * outcome is unknown it removes the tables instead of retrying the
 * exclusive create blindly (issue 13). */
static void test_apply_retry_policy(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_nl nl;
	struct ng_err err = {0};
	struct fake *f = fake_new();
	uint32_t first_begin;

	small_policy(&p);
	f->sc[0].send_errno = ENOBUFS;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), 0);
	assert_int_equal(f->batches, 2);
	first_begin = 1;                       /* ng_nl_init_ops starts at 1 */
	assert_true(f->seqs[0] > first_begin); /* the retry was renumbered */
	free(f);

	f = fake_new();
	for (int i = 0; i < 4; i++)
		f->sc[i].send_errno = ENOBUFS;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_int_equal(f->batches, 2); /* once, then one retry */
	free(f);

	/* Sent, marker lost: no second create; a delete follows. */
	f = fake_new();
	f->sc[0].no_marker = 1;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "the pod's tables were removed, retry the ADD");
	assert_int_equal(f->batches, 2);
	assert_int_equal(f->types[2], (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE);
	free(f);

	f = fake_new();
	f->sc[0].fail_index = 0;
	f->sc[0].fail_errno = EINVAL;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_int_equal(f->batches, 1); /* a refusal is final */
	free(f);

	/* A fresh pod: one exclusive create, no delete in it. */
	f = fake_new();
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), 0);
	assert_int_equal(f->batches, 1);
	for (int i = 0; i < f->nmsg; i++)
		assert_int_not_equal(f->types[i], (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE);
	free(f);

	/* A retried ADD: the table exists, the create is refused with EEXIST
	 * on its first message, and the replace form follows. */
	f = fake_new();
	f->sc[0].fail_index = 0;
	f->sc[0].fail_errno = EEXIST;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), 0);
	assert_int_equal(f->batches, 2);
	assert_int_equal(f->types[2], (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_DELTABLE);
	free(f);

	/* Only the netdev guard is there (the inet table was deleted by
	 * hand): EEXIST on the guard's create, and the replace follows. */
	{
		struct ng_batch cb;
		int guard = -1;

		assert_int_equal(ng_batch_init(&cb, NG_TABLE, 1, &err), 0);
		assert_int_equal(ng_render_create(&p, &cb, &err), 0);
		for (uint32_t i = 0; i < ng_batch_count(&cb); i++)
			if (strstr(ng_batch_describe(&cb, 2 + i), "table netdev"))
				guard = (int)i;
		ng_batch_free(&cb);
		assert_true(guard > 0);
		f = fake_new();
		f->sc[0].fail_index = guard;
		f->sc[0].fail_errno = EEXIST;
		ng_nl_init_ops(&nl, &fake_ops, f);
		assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), 0);
		assert_int_equal(f->batches, 2);
		free(f);
	}

	/* EEXIST elsewhere than a table is a real refusal. */
	f = fake_new();
	f->sc[0].fail_index = 3;
	f->sc[0].fail_errno = EEXIST;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_int_equal(f->batches, 1);
	free(f);

	f = fake_new();
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_delete(&nl, NG_TABLE, &err), 0);
	/* BEGIN, NEWTABLE + DELTABLE for inet, the same for netdev, END */
	assert_int_equal(f->nmsg, 6);
	free(f);
	ng_policy_free(&p);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success_without_acks),
		cmocka_unit_test(test_error_on_kth_message),
		cmocka_unit_test(test_batch_refused),
		cmocka_unit_test(test_lost_replies),
		cmocka_unit_test(test_eintr_and_stale),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_apply_retry_policy),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("nl", tests, NULL, NULL);
}
