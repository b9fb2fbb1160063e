/* The plugin's invocation line for the agent: format and parse, torn and
 * foreign lines refused. */
#include "testutil.h"

#include "state/invstats.h"

static void test_line_round_trip(void **state)
{
	char buf[NG_INV_LINE_MAX];
	struct ng_inv inv;
	int n;

	(void)state;
	n = ng_inv_format(buf, sizeof(buf), "ADD", "not ready", 1234);
	assert_int_equal(n, (int)strlen("ADD not_ready 1234\n"));
	assert_string_equal(buf, "ADD not_ready 1234\n");
	assert_int_equal(ng_inv_parse(buf, (size_t)n, &inv), 0);
	assert_string_equal(inv.verb, "ADD");
	assert_string_equal(inv.decision, "not_ready");
	assert_int_equal(inv.us, 1234);
}

static void test_line_refusals(void **state)
{
	char buf[NG_INV_LINE_MAX];
	struct ng_inv inv;
	static const char *const bad[] = {
		"",
		"\n",
		"ADD",
		"ADD enforced",
		"ADD enforced \n",
		"ADD  12\n",
		"FOO enforced 1\n",
		"ADD Enforced 1\n",
		"ADD enforced 1x\n",
		"ADD enforced 12345678901234567\n",
		"ADDenforced 1\n",
		"ADD enforced -1\n",
		"ADD enf\"orced 1\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ng_inv_parse(bad[i], strlen(bad[i]), &inv), -1);
	assert_int_equal(ng_inv_format(buf, sizeof(buf), "PATCH", "enforced", 1), -1);
	assert_int_equal(ng_inv_format(buf, sizeof(buf), "ADD", "bad\nline", 1), -1);
	assert_int_equal(ng_inv_format(buf, sizeof(buf), "ADD", "", 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_round_trip),
		cmocka_unit_test(test_line_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
