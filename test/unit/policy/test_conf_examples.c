/* Every example in conf/ must be accepted by the same parser the plugin
 * uses, as libcni would hand it over (the entry plus the list's name and
 * cniVersion), so the documentation cannot drift from the code. */
#include "testutil.h"

#include <dirent.h>
#include <libgen.h>

static const char *conf_dir(void)
{
	static char dir[4096];
	char file[4096];

	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(dir, sizeof(dir), "%s/../../../conf", dirname(file));
	return dir;
}

static void check_entry(const char *path, json_t *entry, const char *name, const char *version)
{
	struct ng_config cfg;
	struct ng_err err = {0};
	json_t *e = json_deep_copy(entry);

	if (name)
		json_object_set_new(e, "name", json_string(name));
	if (version)
		json_object_set_new(e, "cniVersion", json_string(version));
	if (ng_config_parse(e, &cfg, &err) != 0)
		fail_msg("%s: the boxxkite-netguard entry is refused: %s", path, err.msg);
	ng_config_free(&cfg);
	json_decref(e);
}

static void test_examples_parse(void **state)
{
	(void)state;
	DIR *d = opendir(conf_dir());
	struct dirent *de;
	int lists = 0, entries = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char path[8192];
		json_error_t je;
		json_t *j;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", conf_dir(), de->d_name);
		j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			fail_msg("%s: not valid JSON: %s", path, je.text);
		if (strstr(de->d_name, ".conflist")) {
			json_t *plugins = json_object_get(j, "plugins"), *p;
			size_t i, ours = 0, idx = 0;

			lists++;
			json_array_foreach(plugins, i, p) {
				if (!strcmp(json_string_value(json_object_get(p, "type")),
					    "boxxkite-netguard")) {
					check_entry(path, p, json_string_value(json_object_get(j, "name")),
						    json_string_value(json_object_get(j, "cniVersion")));
					ours++;
					idx = i;
				}
			}
			/* Exactly once, and last: it must see every earlier result. */
			assert_int_equal(ours, 1);
			assert_int_equal(idx, json_array_size(plugins) - 1);
			entries++;
		} else {
			check_entry(path, j, "example", "1.0.0");
			entries++;
		}
		json_decref(j);
	}
	closedir(d);
	assert_true(lists >= 4);
	assert_true(entries >= 5);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_examples_parse),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("conf_examples", tests, NULL, NULL);
}
