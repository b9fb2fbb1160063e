/* The per-pod commit locks (agent/podlock.h): one lock per key, shared by
 * whoever asks for it; the learner's try that fails while the ops thread
 * holds it; the wake that tells the learner to re-arm what it parked. */
#include "testutil.h"

#include <poll.h>
#include <pthread.h>

#include "agent/podlock.h"

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
	ng_podlock_unlock(a);
	/* The wake: readable until the learner takes it, however many came. */
	assert_false(readable(r.freed_fd));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_and_wake),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
