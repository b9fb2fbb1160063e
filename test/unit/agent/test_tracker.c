/* The tracker of learned elements (agent/tracker.h): when an answer costs
 * a commit (new, or a refresh that moves the expiry by more than a tenth
 * of the lifetime, at most 60 s; never a shorter one), the bound, revert,
 * expiry, the elements due within the keep-alive window and the match of
 * one live flow against them, and the re-plan after a repair (the old
 * expiry kept). Observed through the tracker's functions only. */
#include "testutil.h"

#include "agent/keepalive.h"
#include "agent/tracker.h"

/* An answer teaching one element: ip, tcp, ports lo..hi (a range when they
 * differ), `life` seconds. */
static struct ng_learn_result answer(const char *ip, uint16_t lo, uint16_t hi, uint32_t life)
{
	struct ng_learn_result r = {0};
	struct ng_elem e = {.proto = 6, .p_lo = lo, .p_hi = hi, .timeout = life};

	assert_int_equal(ng_ip_parse(ip, &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(
		ng_vec_push(lo == hi ? &r.single[NG_FAM_IDX(e.lo.fam)] : &r.ranges[NG_FAM_IDX(e.lo.fam)], &e),
		0);
	return r;
}

/* Plans `r` at `now` into a fresh *p; returns how many were planned. */
static size_t plan(struct ng_tracker *t, const char *ip, uint16_t lo, uint16_t hi, uint32_t life, int64_t now,
		   ng_pending_vec *p)
{
	struct ng_learn_result r = answer(ip, lo, hi, life);
	unsigned full = 0;

	p->n = 0;
	assert_int_equal(ng_tracker_plan(t, &r, now, p, &full), 0);
	assert_int_equal(full, 0);
	ng_learn_result_free(&r);
	return p->n;
}

static void test_new_then_refresh_past_the_slack(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};

	/* New: a plain add, its lifetime as the element's timeout. */
	assert_int_equal(plan(&t, "10.0.0.1", 443, 443, 60, 1000, &p), 1);
	assert_false(p.v[0].refresh);
	assert_int_equal(p.v[0].old_expires, 0);
	assert_int_equal(p.v[0].e.timeout, 60);
	assert_int_equal(ng_tracker_count(&t), 1);
	/* Expires at 61 s; the slack is 6 s. 6 s later the new expiry is later
	 * by exactly the slack: nothing to commit. */
	assert_int_equal(plan(&t, "10.0.0.1", 443, 443, 60, 7000, &p), 0);
	/* One millisecond more: a refresh, remembering what it replaces. */
	assert_int_equal(plan(&t, "10.0.0.1", 443, 443, 60, 7001, &p), 1);
	assert_true(p.v[0].refresh);
	assert_int_equal(p.v[0].old_expires, 61000);
	assert_int_equal(p.v[0].old_lifetime, 60);
	/* The same element in a range set is another element. */
	assert_int_equal(plan(&t, "10.0.0.1", 443, 444, 60, 7001, &p), 1);
	assert_false(p.v[0].refresh);
	assert_true(p.v[0].ranged);
	assert_int_equal(ng_tracker_count(&t), 2);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_slack_capped_at_60s(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};

	/* A lifetime of an hour: a tenth would be 6 min, the cap is 60 s. */
	assert_int_equal(plan(&t, "10.0.0.2", 443, 443, 3600, 0, &p), 1);
	assert_int_equal(plan(&t, "10.0.0.2", 443, 443, 3600, 60000, &p), 0);
	assert_int_equal(plan(&t, "10.0.0.2", 443, 443, 3600, 60001, &p), 1);
	assert_true(p.v[0].refresh);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_never_shortens(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};

	assert_int_equal(plan(&t, "10.0.0.3", 443, 443, 600, 1000, &p), 1);
	/* A later answer with a short TTL would end it sooner: not planned. */
	assert_int_equal(plan(&t, "10.0.0.3", 443, 443, 30, 100000, &p), 0);
	/* Nor one whose expiry lies before the tracked one. */
	assert_int_equal(plan(&t, "10.0.0.3", 443, 443, 500, 50000, &p), 0);
	/* Once the tracked expiry has passed, any lifetime is new again
	 * (still a refresh: the kernel may hold it a moment longer). */
	assert_int_equal(plan(&t, "10.0.0.3", 443, 443, 30, 601000, &p), 1);
	assert_true(p.v[0].refresh);
	assert_int_equal(p.v[0].e.timeout, 30);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

/* The i-th address 10.x.y.z: even ones live 600 s, odd ones 30 s. */
static void plan_nth(struct ng_tracker *t, unsigned i, int64_t now, ng_pending_vec *p, unsigned *full)
{
	char ip[32];
	struct ng_learn_result r;

	snprintf(ip, sizeof(ip), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
	r = answer(ip, 443, 443, i & 1 ? 30 : 600);
	assert_int_equal(ng_tracker_plan(t, &r, now, p, full), 0);
	ng_learn_result_free(&r);
}

static void test_bound_counted_and_table_consistent(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};
	unsigned full = 0;

	for (unsigned i = 0; i < NG_TRACK_MAX + 10; i++)
		plan_nth(&t, i, 1000, &p, &full);
	assert_int_equal(ng_tracker_count(&t), NG_TRACK_MAX);
	assert_int_equal(p.n, NG_TRACK_MAX); /* the refused ones are not planned */
	assert_int_equal(full, 10);
	/* The odd half expires; the table stays consistent (every even one
	 * found, none planned again: linear probing's deletion shifted them). */
	assert_int_equal(ng_tracker_expire(&t, 31000), NG_TRACK_MAX / 2);
	assert_int_equal(ng_tracker_count(&t), NG_TRACK_MAX / 2);
	p.n = 0;
	for (unsigned i = 0; i < NG_TRACK_MAX; i += 2)
		plan_nth(&t, i, 31500, &p, &full);
	assert_int_equal(p.n, 0);
	assert_int_equal(full, 10);
	/* Room again: half the bound is free, and counted past it. */
	full = 0;
	for (unsigned i = NG_TRACK_MAX; i < NG_TRACK_MAX + 2 * (NG_TRACK_MAX / 2) + 2; i += 2)
		plan_nth(&t, i, 31500, &p, &full);
	assert_int_equal(ng_tracker_count(&t), NG_TRACK_MAX);
	assert_int_equal(full, 1);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_revert(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0}, again = {0};
	struct ng_learn_result r = answer("10.0.1.1", 443, 443, 60), r2 = answer("10.0.1.2", 443, 443, 60),
			       longer = answer("10.0.1.2", 443, 443, 600);
	unsigned full = 0;

	assert_int_equal(plan(&t, "10.0.1.1", 443, 443, 60, 1000, &p), 1);
	/* One list: a refresh of .1, .2 new, then .2 again with a longer
	 * lifetime (two messages of one TCP segment). The commit fails. */
	p.n = 0;
	assert_int_equal(ng_tracker_plan(&t, &r, 20000, &p, &full), 0);
	assert_int_equal(ng_tracker_plan(&t, &r2, 20000, &p, &full), 0);
	assert_int_equal(ng_tracker_plan(&t, &longer, 20000, &p, &full), 0);
	assert_int_equal(p.n, 3);
	assert_int_equal(ng_tracker_count(&t), 2);
	ng_tracker_revert(&t, &p);
	/* .2 forgotten; .1 back to its old expiry (61 s): the same answer
	 * plans the same refresh again. */
	assert_int_equal(ng_tracker_count(&t), 1);
	assert_int_equal(ng_tracker_plan(&t, &r, 20000, &again, &full), 0);
	assert_int_equal(again.n, 1);
	assert_true(again.v[0].refresh);
	assert_int_equal(again.v[0].old_expires, 61000);
	assert_int_equal(ng_tracker_expire(&t, 79999), 0);
	assert_int_equal(ng_tracker_expire(&t, 80000), 1);
	ng_learn_result_free(&r);
	ng_learn_result_free(&r2);
	ng_learn_result_free(&longer);
	ng_vec_free(&p);
	ng_vec_free(&again);
	ng_tracker_free(&t);
}

static void test_expire(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};

	plan(&t, "10.0.2.1", 443, 443, 30, 0, &p);
	plan(&t, "10.0.2.2", 443, 443, 60, 0, &p);
	plan(&t, "fd00::1", 443, 443, 60, 0, &p);
	assert_int_equal(ng_tracker_expire(&t, 29999), 0);
	assert_int_equal(ng_tracker_expire(&t, 30000), 1); /* due at its expiry */
	assert_int_equal(ng_tracker_count(&t), 2);
	assert_int_equal(ng_tracker_expire(&t, 60000), 2);
	assert_int_equal(ng_tracker_count(&t), 0);
	/* Forgotten: the next answer is a plain add again. */
	assert_int_equal(plan(&t, "10.0.2.2", 443, 443, 60, 60000, &p), 1);
	assert_false(p.v[0].refresh);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_due_and_keepalive(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	struct ng_tracker_due d;
	ng_pending_vec p = {0};
	struct ng_ip dst, other, v6;

	plan(&t, "10.0.3.1", 443, 443, 30, 0, &p);   /* expires at 30 s */
	plan(&t, "10.0.3.1", 8000, 8100, 30, 0, &p); /* the same address, a port range */
	plan(&t, "10.0.3.2", 443, 443, 30, 0, &p);
	plan(&t, "fd00::3", 443, 443, 30, 0, &p);
	plan(&t, "10.0.3.9", 443, 443, 600, 0, &p); /* far from due */
	assert_int_equal(ng_ip_parse("10.0.3.1", &dst), 0);
	assert_int_equal(ng_ip_parse("10.0.3.9", &other), 0);
	assert_int_equal(ng_ip_parse("fd00::3", &v6), 0);
	/* At 10 s with a 15 s window nothing is due (30 s - 10 s > 15 s). */
	assert_int_equal(ng_tracker_due(&t, 10000, 15000, &d), 0);
	ng_tracker_due_free(&d);
	/* At 15 s: the four short ones, not the far one. */
	assert_int_equal(ng_tracker_due(&t, 15000, 15000, &d), 4);
	/* As the keep-alive thread is handed them: each due element, and
	 * three distinct (address, protocol) among them: three lookups. */
	struct ng_ka_job *job = ng_ka_job_new("k", "n", &(struct ng_podref){.netns = NULL});
	assert_non_null(job);
	for (uint32_t i = 0; i < d.n; i++) {
		struct ng_elem e;
		bool ranged;

		ng_tracker_due_elem(&t, &d, i, &e, &ranged);
		assert_true(ranged == (e.p_lo != e.p_hi));
		job->e[job->n++] =
			(struct ng_ka_elem){.ip = e.lo, .proto = e.proto, .p_lo = e.p_lo, .p_hi = e.p_hi};
	}
	assert_int_equal(ng_ka_lookups(job, job->n), 3);
	assert_int_equal(ng_ka_lookups(job, 1), 1);
	ng_ka_job_free(job);
	p.n = 0;
	/* Another address, another protocol, a port in no range: nothing. */
	assert_int_equal(ng_tracker_keepalive(&t, &d, &other, 6, 443, &p), 0);
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 17, 443, &p), 0);
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 6, 444, &p), 0);
	assert_int_equal(p.n, 0);
	/* A flow to 10.0.3.1:8050: the range element only, for its lifetime. */
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 6, 8050, &p), 1);
	assert_true(p.v[0].refresh && p.v[0].ranged);
	assert_int_equal(p.v[0].e.p_lo, 8000);
	assert_int_equal(p.v[0].e.timeout, 30);
	/* A second flow there: refreshed already (out of the window). */
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 6, 8060, &p), 0);
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 6, 443, &p), 1);
	assert_int_equal(ng_tracker_keepalive(&t, &d, &v6, 6, 443, &p), 1);
	assert_int_equal(p.n, 3);
	ng_tracker_due_free(&d);
	/* The refreshed ones live to 45 s; 10.0.3.2 (no flow) ends at 30 s. */
	assert_int_equal(ng_tracker_expire(&t, 30000), 1);
	assert_int_equal(ng_tracker_expire(&t, 44999), 0);
	assert_int_equal(ng_tracker_expire(&t, 45000), 3);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_relearn_keeps_the_expiry(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	struct ng_tracker_due d;
	ng_pending_vec p = {0};
	struct ng_ip dst;

	plan(&t, "10.0.4.1", 443, 443, 60, 0, &p);  /* to 60 s */
	plan(&t, "10.0.4.2", 443, 443, 120, 0, &p); /* to 120 s */
	plan(&t, "10.0.4.3", 443, 443, 30, 0, &p);  /* expired by the repair */
	p.n = 0;
	assert_int_equal(ng_tracker_relearn(&t, 40500, &p), 2);
	assert_int_equal(ng_tracker_expire(&t, 40500), 1);
	assert_int_equal(p.n, 2);
	for (size_t i = 0; i < p.n; i++) {
		/* A refresh (the repaired table may still hold it), for what is
		 * left: 19 s and 79 s, the odd half second given up. */
		assert_true(p.v[i].refresh);
		assert_int_equal(p.v[i].e.timeout, p.v[i].old_lifetime == 60 ? 19 : 79);
	}
	/* Not a new lease: both end when they would have (within a second,
	 * never later). */
	assert_int_equal(ng_tracker_expire(&t, 59000), 0);
	assert_int_equal(ng_tracker_expire(&t, 60000), 1);
	/* The lease is kept: a live connection renews it in full (120 s). */
	assert_int_equal(ng_ip_parse("10.0.4.2", &dst), 0);
	assert_int_equal(ng_tracker_due(&t, 110000, 15000, &d), 1);
	p.n = 0;
	assert_int_equal(ng_tracker_keepalive(&t, &d, &dst, 6, 443, &p), 1);
	assert_int_equal(p.v[0].e.timeout, 120);
	ng_tracker_due_free(&d);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static void test_learned_never_earlier(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};
	struct ng_elem e = {.proto = 6, .p_lo = 443, .p_hi = 443, .timeout = 60};

	assert_int_equal(ng_ip_parse("10.0.5.1", &e.lo), 0);
	e.hi = e.lo;
	/* Read back after a restart: tracked to 50 s. */
	assert_int_equal(ng_tracker_learned(&t, &e, false, 50000), 0);
	assert_int_equal(ng_tracker_learned(&t, &e, false, 20000), 0); /* not moved earlier */
	assert_int_equal(ng_tracker_expire(&t, 49999), 0);
	/* An answer at 40 s moves it to 100 s: a refresh. */
	assert_int_equal(plan(&t, "10.0.5.1", 443, 443, 60, 40000, &p), 1);
	assert_true(p.v[0].refresh);
	assert_int_equal(p.v[0].old_expires, 50000);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

static bool only_443(const struct ng_elem *e, const void *data)
{
	(void)data;
	return e->p_lo == 443;
}

/* The learner's view against the kernel's (agent/learncheck.h): a copy
 * keeps what the filter keeps, with its expiry; an element the kernel
 * lacks, or holds for less time, is missing; one about to expire is not
 * looked at. */
static void test_copy_and_missing(void **state)
{
	(void)state;
	struct ng_tracker mine = {0}, copy = {0}, kernel = {0};
	ng_pending_vec p = {0};
	struct ng_elem first, e = {.proto = 6, .p_lo = 443, .p_hi = 443, .timeout = 60};
	bool ranged = true;

	plan(&mine, "10.0.0.1", 443, 443, 60, 0, &p);
	plan(&mine, "10.0.0.2", 443, 443, 60, 0, &p);
	plan(&mine, "10.0.0.3", 80, 80, 60, 0, &p);
	plan(&mine, "10.0.0.4", 443, 443, 3, 0, &p); /* 3 s: within the margin at 1.5 s */
	assert_int_equal(ng_tracker_copy(&mine, &copy, only_443, NULL), 0);
	assert_int_equal(ng_tracker_count(&copy), 3);
	/* The kernel holds .1 as committed, .2 with 20 s only (re-added by
	 * another hand), not .4. */
	assert_int_equal(ng_ip_parse("10.0.0.1", &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(ng_tracker_learned(&kernel, &e, false, 60000), 0);
	assert_int_equal(ng_ip_parse("10.0.0.2", &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(ng_tracker_learned(&kernel, &e, false, 20000), 0);
	assert_int_equal(ng_tracker_missing(&copy, &kernel, 1500, 2000, &first, &ranged), 1);
	assert_true(ng_ip_eq(&first.lo, &e.lo));
	assert_false(ranged);
	/* Within the margin, an earlier kernel expiry is not short. */
	assert_int_equal(ng_tracker_learned(&kernel, &e, false, 58500), 0);
	assert_int_equal(ng_tracker_missing(&copy, &kernel, 1500, 2000, &first, &ranged), 0);
	/* Unfiltered, the port-80 element is missing too. */
	assert_int_equal(ng_tracker_missing(&mine, &kernel, 1500, 2000, &first, &ranged), 1);
	assert_int_equal(first.p_lo, 80);
	ng_vec_free(&p);
	ng_tracker_free(&mine);
	ng_tracker_free(&copy);
	ng_tracker_free(&kernel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_then_refresh_past_the_slack),
		cmocka_unit_test(test_slack_capped_at_60s),
		cmocka_unit_test(test_never_shortens),
		cmocka_unit_test(test_bound_counted_and_table_consistent),
		cmocka_unit_test(test_revert),
		cmocka_unit_test(test_expire),
		cmocka_unit_test(test_due_and_keepalive),
		cmocka_unit_test(test_relearn_keeps_the_expiry),
		cmocka_unit_test(test_learned_never_earlier),
		cmocka_unit_test(test_copy_and_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
