/* The poster's condition queue (agent/kpost.h, ng_kpost_fold): the newest
 * state of a pod wins, but a False not tried yet is never folded into the
 * True behind it, so the API sees a drift the repair undid at once, or a
 * grant change, as False then True; a pod never has more than two queued. */
#include "testutil.h"

#include "agent/kpost.h"

/* A pod's queued conditions as the poster keeps them: status, and whether
 * the API refused it already (a retry, not held). */
struct q {
	size_t n;
	bool status[4], retry[4];
};

/* What ng_kpost_condition does with the answer. */
static void post(struct q *q, bool status)
{
	bool held[4];
	size_t keep;

	for (size_t i = 0; i < q->n; i++)
		held[i] = !q->status[i] && !q->retry[i];
	keep = ng_kpost_fold(held, q->n, status);
	assert_true(keep <= q->n);
	q->status[keep] = status;
	q->retry[keep] = false;
	q->n = keep + 1;
	assert_true(q->n <= 2);
}

/* The poster sends the oldest. */
static bool sent(struct q *q)
{
	bool s = q->status[0];

	assert_true(q->n > 0);
	q->n--;
	memmove(q->status, q->status + 1, q->n * sizeof(bool));
	memmove(q->retry, q->retry + 1, q->n * sizeof(bool));
	return s;
}

static void test_fold_for_each_queued_state(void **state)
{
	/* held[i]: the queued one is a False not tried yet */
	const bool held_false[] = {true}, plain[] = {false}, false_true[] = {true, false};

	(void)state;
	assert_int_equal(ng_kpost_fold(NULL, 0, true), 0); /* nothing queued: queued */
	assert_int_equal(ng_kpost_fold(NULL, 0, false), 0);
	assert_int_equal(ng_kpost_fold(plain, 1, true), 0); /* over a True (or a retry): replaced */
	assert_int_equal(ng_kpost_fold(plain, 1, false), 0);
	assert_int_equal(ng_kpost_fold(held_false, 1, false), 0); /* False over False: replaced */
	assert_int_equal(ng_kpost_fold(held_false, 1, true), 1);  /* True behind a False not sent */
	assert_int_equal(ng_kpost_fold(false_true, 2, true), 1);  /* ... the True after it replaced */
	assert_int_equal(ng_kpost_fold(false_true, 2, false), 0); /* False again: one False left */
}

/* A drift repaired within milliseconds: both states reach the API, in order. */
static void test_drift_repaired_at_once_reaches_the_api(void **state)
{
	struct q q = {0};

	(void)state;
	post(&q, false);
	post(&q, true);
	assert_int_equal(q.n, 2);
	assert_false(sent(&q));
	assert_true(sent(&q));
	assert_int_equal(q.n, 0);
}

/* Flapping while the API is slow: never more than two, the last state last,
 * a False in between kept. */
static void test_flapping_keeps_two_and_the_false(void **state)
{
	struct q q = {0};

	(void)state;
	for (int i = 0; i <= 50; i++) {
		post(&q, i % 2 == 0);
		assert_true(q.n <= 2);
		assert_true(q.status[q.n - 1] == (i % 2 == 0));
		if (q.n == 2)
			assert_false(q.status[0]);
	}
	/* True, False, True, ..., True: the False not sent stays first. */
	assert_int_equal(q.n, 2);
	assert_false(q.status[0]);
	assert_true(q.status[1]);
	post(&q, true);
	post(&q, true);
	assert_int_equal(q.n, 2);
	post(&q, false);
	assert_int_equal(q.n, 1);
	assert_false(q.status[0]);
}

/* A False the API refused is tried again only while nothing newer came: a
 * True after it replaces it (it is not held, so the retry can never land
 * after the True and leave the pod False). */
static void test_refused_false_not_held_before_a_true(void **state)
{
	struct q q = {0};

	(void)state;
	post(&q, false);
	q.retry[0] = true; /* the patch failed; queued again, 2 s later */
	post(&q, true);
	assert_int_equal(q.n, 1);
	assert_true(sent(&q));
}

/* A True alone is the newest state: older Trues never pile up. */
static void test_trues_replace_each_other(void **state)
{
	struct q q = {0};

	(void)state;
	for (int i = 0; i < 5; i++)
		post(&q, true);
	assert_int_equal(q.n, 1);
	assert_true(sent(&q));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_for_each_queued_state),
		cmocka_unit_test(test_drift_repaired_at_once_reaches_the_api),
		cmocka_unit_test(test_flapping_keeps_two_and_the_false),
		cmocka_unit_test(test_refused_false_not_held_before_a_true),
		cmocka_unit_test(test_trues_replace_each_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
