/* Reading the kernel release for the packet-socket guard's floor (5.17). */
#include "testutil.h"

#include "base/kernelver.h"

static void test_releases(void **state)
{
	(void)state;
	static const char *const ok[] = {"5.17.0",          "5.17",   "6.1.0-18-amd64",
					 "6.18.44-fc-v657", "10.0.1", NULL};
	static const char *const old[] = {"5.16.20", "5.15.0-91-generic", "4.19.0", "5.4", "5.1.0", NULL};
	static const char *const junk[] = {"", "linux", "5", "5.", "5.x", ".17", "-6.1", NULL};

	for (int i = 0; ok[i]; i++)
		if (!ng_kernel_at_least(ok[i], 5, 17))
			fail_msg("%s should be at least 5.17", ok[i]);
	for (int i = 0; old[i]; i++)
		if (ng_kernel_at_least(old[i], 5, 17))
			fail_msg("%s should be older than 5.17", old[i]);
	for (int i = 0; junk[i]; i++)
		if (ng_kernel_at_least(junk[i], 0, 0))
			fail_msg("\"%s\" is not a release", junk[i]);
	assert_false(ng_kernel_at_least(NULL, 0, 0));
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_releases),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
