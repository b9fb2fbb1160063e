/* Finding the plugin's entry on disk (verify, stats): an entry file, a
 * conflist, or the conf dir's active config chosen as runtimes choose it. */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "state/confdir.h"

static char dir[256];

static void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ng-test-conffile-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_active_and_entry(void **state)
{
	(void)state;
	char used[1024], active[1024];
	struct ng_err err = {0};
	json_t *e;

	/* Sorted by name across extensions; other files are ignored. */
	write_file("99-other.conf", "{\"cniVersion\":\"0.3.1\",\"name\":\"x\",\"type\":\"bridge\"}");
	write_file("20-ours.conflist",
		   "{\"cniVersion\":\"0.4.0\",\"name\":\"k8s\",\"plugins\":[{\"type\":\"ptp\"},"
		   "{\"type\":\"boxxkite-netguard\",\"enforce\":{\"namespaces\":[\"a\"]}}]}");
	write_file("10-notes.txt", "not a config");
	assert_int_equal(ng_conffile_active(dir, active, sizeof(active)), 0);
	assert_contains(active, "/20-ours.conflist");

	e = ng_conffile_entry(dir, used, sizeof(used), &err);
	if (!e)
		fail_msg("%s", err.msg);
	assert_contains(used, "20-ours.conflist");
	/* Handed over as libcni would: with the list's name and version. */
	assert_string_equal(json_string_value(json_object_get(e, "name")), "k8s");
	assert_string_equal(json_string_value(json_object_get(e, "cniVersion")), "0.4.0");
	json_decref(e);

	/* As libcni: a hidden file with a config extension counts, a
	 * directory does not, and the extension is what follows the last dot
	 * (".conf.bak" is not a config). */
	write_file("15-old.conf.bak", "{}");
	snprintf(used, sizeof(used), "%s/12-dir.conflist", dir);
	assert_int_equal(mkdir(used, 0700), 0);
	assert_int_equal(ng_conffile_active(dir, active, sizeof(active)), 0);
	assert_contains(active, "/20-ours.conflist");
	write_file(".hidden.conf", "{\"cniVersion\":\"1.0.0\",\"name\":\"h\",\"type\":\"bridge\"}");
	assert_int_equal(ng_conffile_active(dir, active, sizeof(active)), 0);
	assert_contains(active, "/.hidden.conf");
	snprintf(used, sizeof(used), "%s/.hidden.conf", dir);
	assert_int_equal(unlink(used), 0);

	write_file("05-first.conflist",
		   "{\"cniVersion\":\"1.0.0\",\"name\":\"y\",\"plugins\":[{\"type\":\"ptp\"}]}");
	assert_null(ng_conffile_entry(dir, used, sizeof(used), &err));
	assert_contains(err.msg, "no boxxkite-netguard entry");

	char path[600];
	snprintf(path, sizeof(path), "%s/99-other.conf", dir);
	assert_null(ng_conffile_entry(path, used, sizeof(used), &err));
	assert_contains(err.msg, "not a boxxkite-netguard entry");
	snprintf(path, sizeof(path), "%s/10-notes.txt", dir);
	assert_null(ng_conffile_entry(path, used, sizeof(used), &err));
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_active_and_entry),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("conffile", tests, setup, teardown);
}
