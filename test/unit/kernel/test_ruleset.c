/* kernel/ruleset.c over the fake kernel: when ADD retries, replaces, or
 * gives up and removes what it may have applied. */
#include "fake_kernel.h"

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

	/* Refused for another transaction's sake (EBUSY on a body message,
	 * or on BEGIN; ERESTART: the generation moved): nothing was applied,
	 * so the same batch goes again, and the third attempt applies. */
	f = fake_new();
	f->sc[0].fail_index = 3;
	f->sc[0].fail_errno = EBUSY;
	f->sc[1].refuse_errno = ERESTART;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), 0);
	assert_int_equal(f->batches, 3);
	free(f);
	/* ... a bounded number of times. */
	f = fake_new();
	for (int i = 0; i < 4; i++)
		f->sc[i].refuse_errno = EBUSY;
	ng_nl_init_ops(&nl, &fake_ops, f);
	assert_int_equal(ng_ruleset_apply(&nl, &p, NG_TABLE, &err), -1);
	assert_int_equal(f->batches, NG_RULESET_TRIES);
	assert_contains(
		err.msg,
		"10 attempts: netfilter refused the transaction (batch begin): device or resource busy");
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
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_retry_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
