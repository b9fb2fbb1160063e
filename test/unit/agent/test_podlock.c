/* The per-pod commit locks (agent/podlock.h): one lock per key, shared by
 * whoever asks for it; the learner's try that fails while the ops thread
 * holds it; the wake that tells the learner to re-arm what it parked; the
 * copy of the learner's trackers (what a name entry still covers). */
#include "testutil.h"

#include <poll.h>
#include <pthread.h>

#include "agent/podlock.h"
#include "agent/tracker.h"

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

static void *try_other(void *l)
{
	return (void *)(uintptr_t)ng_podlock_trylock(l);
}

static void test_try_and_wake(void **state)
{
	struct ng_podlocks r;
	struct ng_podlock *a, *b, *c;
	pthread_t t;
	void *got;

	(void)state;
	assert_int_equal(ng_podlocks_init(&r), 0);
	a = ng_podlock_get(&r, "k1@eth0");
	b = ng_podlock_get(&r, "k1@eth0");
	c = ng_podlock_get(&r, "k2@eth0");
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, c);
	/* Held here ("the ops thread"): another thread's try fails at once. */
	ng_podlock_lock(a);
	assert_int_equal(pthread_create(&t, NULL, try_other, a), 0);
	assert_int_equal(pthread_join(t, &got), 0);
	assert_false((uintptr_t)got);
	/* Another pod's lock is free. */
	assert_int_equal(pthread_create(&t, NULL, try_other, c), 0);
	assert_int_equal(pthread_join(t, &got), 0);
	assert_true((uintptr_t)got);
	ng_podlock_unlock(c);
	/* The ops thread lets go of a lock the learner tried: a wake. */
	assert_false(readable(r.freed_fd));
	ng_podlock_unlock_ops(&r, a);
	assert_true(readable(r.freed_fd));
	ng_podlocks_woken(&r);
	/* Nobody tried: no wake. */
	ng_podlock_lock(a);
	ng_podlock_unlock_ops(&r, a);
	assert_false(readable(r.freed_fd));
	/* The wake: readable until the learner takes it, however many came. */
	ng_podlocks_wake(&r);
	ng_podlocks_wake(&r);
	assert_true(readable(r.freed_fd));
	ng_podlocks_woken(&r);
	assert_false(readable(r.freed_fd));
	ng_podlock_put(&r, a);
	ng_podlock_put(&r, b);
	ng_podlock_put(&r, c);
	assert_int_equal(r.v.n, 0);
	ng_podlocks_free(&r);
}

/* What a name entry of the policy no longer covers is not the learner's
 * to claim in the tables. */
static void test_copy_covered(void **state)
{
	struct ng_podlocks r;
	struct ng_podlock *l;
	struct ng_tracker tr = {0}, copy = {0}, copy_node = {0};
	struct ng_policy pol = {.learn = true};
	struct ng_name_entry ne = {.proto = 6, .p_lo = 443, .p_hi = 443};
	struct ng_elem e = {.proto = 6, .p_lo = 443, .p_hi = 443, .timeout = 60};

	(void)state;
	assert_int_equal(ng_podlocks_init(&r), 0);
	l = ng_podlock_get(&r, "k@eth0");
	ng_podlock_lock(l);
	assert_int_equal(ng_podlock_copy(l, &pol, &copy, &copy_node), 1); /* no learner */
	assert_int_equal(ng_ip_parse("10.0.0.1", &e.lo), 0);
	assert_int_equal(ng_tracker_learned(&tr, &e, false, 60000), 0);
	e.p_lo = e.p_hi = 80;
	assert_int_equal(ng_tracker_learned(&tr, &e, false, 60000), 0);
	ng_podlock_attach(l, &tr, NULL);
	assert_int_equal(ng_vec_push(&pol.name_entries, &ne), 0);
	assert_int_equal(ng_podlock_copy(l, &pol, &copy, &copy_node), 0);
	assert_int_equal(ng_tracker_count(&copy), 1);
	assert_int_equal(ng_tracker_count(&copy_node), 0);
	ng_podlock_attach(l, NULL, NULL);
	ng_podlock_unlock(l);
	ng_podlock_put(&r, l);
	ng_podlocks_free(&r);
	ng_vec_free(&pol.name_entries);
	ng_tracker_free(&tr);
	ng_tracker_free(&copy);
	ng_tracker_free(&copy_node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_and_wake),
		cmocka_unit_test(test_copy_covered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
