/* The netlink transport against a fake kernel that answers as nfnetlink
 * does: nothing for a body message that succeeds (none asks for an ack),
 * an error for one that fails, then the marker request's NEWGEN and ack.
 * An error on the k-th message (with extended ack), a refused batch, error
 * replies that overrun the buffer (ENOBUFS), EINTR, truncation, a lost
 * marker (the outcome unknown: never retried, the table removed), stale
 * replies; and the proof that a transaction always leaves in ONE sendmsg,
 * BEGIN first and END last. */
#include "fake_kernel.h"

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
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success_without_acks), cmocka_unit_test(test_error_on_kth_message),
		cmocka_unit_test(test_batch_refused),        cmocka_unit_test(test_lost_replies),
		cmocka_unit_test(test_eintr_and_stale),      cmocka_unit_test(test_send_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
