/* The agent's process metrics: /proc/self/stat parsed whatever the command
 * holds, and the families promtool accepts (when promtool is installed). */
#include "testutil.h"

#include <time.h>

#include "agent/procmetrics.h"
#include "base/version.h"

static void test_parse(void **state)
{
	struct ng_procstat st;
	/* a command with a space and a ')' of its own */
	const char *line =
		"4242 (boxx kite) x) S 1 4242 4242 0 -1 4194560 1200 0 0 0 "
		"250 75 0 0 20 0 3 0 987654 123456789 3000 18446744073709551615 1 1 0 0 0 0 0 0 0\n";

	(void)state;
	assert_int_equal(ng_procstat_parse(line, &st), 0);
	assert_int_equal(st.utime, 250);
	assert_int_equal(st.stime, 75);
	assert_int_equal(st.starttime, 987654);
	assert_int_equal(st.vsize, 123456789);
	assert_int_equal(st.rss, 3000);
	assert_int_equal(ng_procstat_parse("4242 (x) S 1 2 3\n", &st), -1);
	assert_int_equal(ng_procstat_parse("no parenthesis", &st), -1);
	assert_int_equal(ng_procstat_parse(
				 "1 (x) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13 14 15 16 17 18 19 20 21 22", &st),
			 -1);
}

static void test_render(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	static const char *const fams[] = {"boxxkite_netguard_build_info{version=\"" NG_VERSION
					   "\",revision=\"",
					   "\nprocess_cpu_seconds_total ",
					   "\nprocess_resident_memory_bytes ",
					   "\nprocess_virtual_memory_bytes ",
					   "\nprocess_start_time_seconds ",
					   "\nprocess_open_fds ",
					   "\nprocess_max_fds "};

	(void)state;
	ng_procmetrics_render(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		assert_non_null(strstr(text, fams[i]));
	/* this process started after boot and before now */
	{
		const char *s = strstr(text, "\nprocess_start_time_seconds ");
		double t = strtod(s + strlen("\nprocess_start_time_seconds "), NULL);

		assert_true(t > 1.7e9 && t <= (double)time(NULL) + 1);
	}
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		FILE *p = popen("promtool check metrics >/dev/null 2>&1", "w");

		assert_non_null(p);
		fputs(text, p);
		assert_int_equal(pclose(p), 0);
	}
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
