/* The watcher's fight detection (watch.h): when another writer keeps
 * rewriting the conf dir, back off instead of fighting it. Pure. */
#include "conflist_fixtures.h"

/* ---- fight detection ----------------------------------------------------------- */

static void test_fight(void **state)
{
	(void)state;
	struct ng_fight f;
	double span = -1;

	ng_fight_init(&f, 5, 60, 300);
	/* Spread-out rewrites (a primary restarting now and then): no fight. */
	for (int i = 0; i < 20; i++)
		assert_int_equal(ng_fight_wrote(&f, i * 20.0, &span), 0);
	ng_fight_init(&f, 5, 60, 300);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ng_fight_wrote(&f, 1000 + i, &span), 0);
	assert_int_equal(ng_fight_wrote(&f, 1004, &span), 5);
	assert_true(span == 4.0);
	assert_true(f.delay == 2.0 && f.not_before == 1006.0);
	assert_int_equal(ng_fight_wrote(&f, 1006, &span), 6);
	assert_true(f.delay == 4.0);
	for (int i = 0; i < 10; i++)
		ng_fight_wrote(&f, 1010 + i, &span);
	assert_true(f.delay == 300.0); /* capped */
	/* Our own write's event finds nothing to do: not yet calm. */
	assert_false(ng_fight_settled(&f, 1020));
	assert_true(f.delay == 300.0);
	/* A whole window without rewrites: the fight is over, said once. */
	assert_true(ng_fight_settled(&f, 1019 + 60));
	assert_true(f.delay == 0 && f.not_before == 0);
	assert_false(ng_fight_settled(&f, 2000));
	/* Many writes never overflow the ring. */
	for (int i = 0; i < 100; i++)
		ng_fight_wrote(&f, 3000 + i * 0.01, &span);
	assert_true(f.n <= NG_FIGHT_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
