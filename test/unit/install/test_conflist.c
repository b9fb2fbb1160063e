/* The installer's merge, pure: conflist merging and stripping on the configs
 * real primaries write (fixtures/conflists/), entry validation through the
 * plugin's own parser, the .conf conversion, the names runtimes read. */
#include "conflist_fixtures.h"

/* The keys of an object, in order, as one string. */
static void key_order(const json_t *o, char *out, size_t n)
{
	const char *k;
	json_t *v;

	out[0] = '\0';
	json_object_foreach((json_t *)o, k, v) {
		strncat(out, k, n - strlen(out) - 1);
		strncat(out, ",", n - strlen(out) - 1);
	}
}

/* ---- merging conflists ------------------------------------------------------- */

static void test_merge_every_primary(void **state)
{
	(void)state;
	json_t *e = entry();

	for (int i = 0; LISTS[i]; i++) {
		json_t *orig = fixture(LISTS[i]), *merged, *again, *stripped, *plugins, *reparsed;
		struct ng_err err = {0};
		char ko[512], km[512], *text;
		size_t n, removed, len;
		bool changed;

		if (ng_conflist_merge(orig, LISTS[i], e, &merged, &changed, &err) < 0)
			fail_msg("%s: %s", LISTS[i], err.msg);
		assert_true(changed);
		plugins = json_object_get(merged, "plugins");
		n = json_array_size(json_object_get(orig, "plugins"));
		/* The primary's plugins unchanged and in order, ours appended last. */
		assert_int_equal(json_array_size(plugins), n + 1);
		for (size_t k = 0; k < n; k++)
			assert_true(json_equal(json_array_get(plugins, k),
					       json_array_get(json_object_get(orig, "plugins"), k)));
		assert_true(json_equal(json_array_get(plugins, n), e));
		/* Every key of the primary kept, in its order. */
		key_order(orig, ko, sizeof(ko));
		key_order(merged, km, sizeof(km));
		assert_string_equal(ko, km);
		key_order(json_array_get(json_object_get(orig, "plugins"), 0), ko, sizeof(ko));
		key_order(json_array_get(plugins, 0), km, sizeof(km));
		assert_string_equal(ko, km);
		/* What we write reads back as the same document. */
		text = ng_conf_dump(merged, &len);
		assert_non_null(text);
		assert_int_equal(text[len - 1], '\n');
		reparsed = tu_json(text);
		assert_true(json_equal(reparsed, merged));
		/* Idempotent. */
		assert_int_equal(ng_conflist_merge(merged, LISTS[i], e, &again, &changed, &err), 0);
		assert_false(changed);
		assert_true(json_equal(again, merged));
		/* Stripping gives the primary back. */
		stripped = ng_conflist_strip(merged, &removed);
		assert_int_equal(removed, 1);
		assert_true(json_equal(stripped, orig));
		free(text);
		json_decref(reparsed);
		json_decref(stripped);
		json_decref(again);
		json_decref(merged);
		json_decref(orig);
	}
	json_decref(e);
}

static void test_merge_replaces_and_dedups(void **state)
{
	(void)state;
	json_t *e = entry(), *list = fixture("10-flannel.conflist"),
	       *plugins = json_object_get(list, "plugins");
	json_t *old = json_deep_copy(e), *out;
	struct ng_err err = {0};
	bool changed;

	/* An older entry of ours first (broken: no prevResult there) and a
	 * copy in the middle: one remains, the new one, last. */
	json_object_set_new(old, "denyAction", json_string("drop"));
	json_array_insert(plugins, 0, old);
	json_array_insert(plugins, 2, e);
	assert_int_equal(ng_conflist_merge(list, "x", e, &out, &changed, &err), 0);
	assert_true(changed);
	assert_int_equal(ng_conflist_count_ours(out), 1);
	assert_int_equal(json_array_size(json_object_get(out, "plugins")), 3);
	assert_true(json_equal(json_array_get(json_object_get(out, "plugins"), 2), e));
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(out, "plugins"), 0), "type")),
			    "flannel");
	json_decref(out);
	json_decref(old);
	json_decref(list);
	json_decref(e);
}

static void test_merge_tolerates_later_chained_plugin(void **state)
{
	(void)state;
	json_t *e = entry(), *list = fixture("10-kindnet.conflist"), *out;
	struct ng_err err = {0};
	bool changed;

	/* Ours after the primary, then another installer's plugin appended
	 * after us: no rewrite, or two "must be last" installers would take
	 * turns forever. */
	json_array_insert(json_object_get(list, "plugins"), 1, e);
	json_array_append_new(json_object_get(list, "plugins"), tu_json("{\"type\":\"istio-cni\"}"));
	assert_int_equal(ng_conflist_merge(list, "x", e, &out, &changed, &err), 0);
	assert_false(changed);
	json_decref(out);
	json_decref(list);
	json_decref(e);
}

static void expect_merge_refused(json_t *list, json_t *e, const char *why)
{
	struct ng_err err = {0};
	json_t *out = NULL;
	bool changed;

	if (ng_conflist_merge(list, "10-x.conflist", e, &out, &changed, &err) == 0)
		fail_msg("merge accepted, expected \"%s\"", why);
	assert_null(out);
	assert_contains(err.msg, why);
	json_decref(list);
	json_decref(e);
}

static void test_merge_refusals(void **state)
{
	(void)state;
	json_t *e;

	/* The plugin's own refusals, before anything reaches a node. */
	e = entry();
	json_object_set_new(json_object_get(e, "egress"), "allow", tu_json("[\"0.0.0.0/0:443\"]"));
	expect_merge_refused(fixture("10-kindnet.conflist"), e, "0.0.0.0/0 would match every address");
	e = entry();
	json_object_set_new(json_object_get(e, "egress"), "allow", tu_json("[\"CHANGEME:443\"]"));
	expect_merge_refused(fixture("10-kindnet.conflist"), e, "CHANGEME");
	e = entry();
	json_object_set_new(e, "egres", json_object());
	expect_merge_refused(fixture("10-kindnet.conflist"), e, "egres: unknown key");
	/* A primary whose cniVersion the plugin does not speak. */
	expect_merge_refused(
		tu_json("{\"cniVersion\":\"0.2.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"ptp\"}]}"),
		entry(), "cniVersion \"0.2.0\" is not supported");
	/* Lists runtimes would not run. */
	expect_merge_refused(tu_json("{\"cniVersion\":\"0.3.1\",\"plugins\":[{\"type\":\"ptp\"}]}"), entry(),
			     "no \"name\"");
	expect_merge_refused(tu_json("{\"name\":\"n\",\"plugins\":[{\"type\":\"ptp\"}]}"), entry(),
			     "no \"cniVersion\"");
	expect_merge_refused(tu_json("{\"cniVersion\":\"0.3.1\",\"name\":\"n\",\"plugins\":[]}"), entry(),
			     "non-empty array");
	expect_merge_refused(tu_json("{\"cniVersion\":\"0.3.1\",\"name\":\"n\",\"plugins\":[{\"ipam\":{}}]}"),
			     entry(), "plugins[0]");
	expect_merge_refused(tu_json("{\"cniVersion\":\"0.3.1\",\"name\":\"n\",\"plugins\":[{\"type\":"
				     "\"boxxkite-netguard\"}]}"),
			     entry(), "needs a primary plugin");
}

static void test_entry_shape(void **state)
{
	(void)state;
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"{\"type\":\"bridge\"}", "type must be \"boxxkite-netguard\""},
		{"{\"enforce\":{}}", "type must be"},
		{"[1]", "not a JSON object"},
		{"{\"type\":\"boxxkite-netguard\",", "not valid JSON"},
		{"{\"type\":\"boxxkite-netguard\",\"type\":\"boxxkite-netguard\"}", "duplicate"},
		{"{\"type\":\"boxxkite-netguard\",\"cniVersion\":\"1.0.0\"}", "remove \"cniVersion\""},
		{"{\"type\":\"boxxkite-netguard\",\"name\":\"x\"}", "remove \"name\""},
		{"{\"type\":\"boxxkite-netguard\",\"prevResult\":{}}", "remove \"prevResult\""},
		{"{\"type\":\"boxxkite-netguard\",\"runtimeConfig\":{}}", "remove \"runtimeConfig\""},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ng_err err = {0};
		json_t *e = NULL;

		if (ng_entry_parse(bad[i].text, strlen(bad[i].text), &e, &err) == 0)
			fail_msg("accepted: %s", bad[i].text);
		assert_int_equal(err.code, NG_E_CONFIG);
		assert_contains(err.msg, bad[i].why);
		assert_contains(err.msg, "plugin entry");
	}
}

/* ---- single-plugin configs ------------------------------------------------- */

static void test_conf_to_conflist(void **state)
{
	(void)state;
	json_t *e = entry(), *conf = fixture("05-cilium.conf"), *list, *plugins;
	struct ng_err err = {0};
	char keys[256];

	assert_int_equal(ng_conf_to_conflist(conf, "05-cilium.conf", e, &list, &err), 0);
	key_order(list, keys, sizeof(keys));
	assert_string_equal(keys, "cniVersion,name," NG_GENERATED_KEY ",plugins,");
	assert_string_equal(json_string_value(json_object_get(list, "cniVersion")), "0.3.1");
	assert_string_equal(json_string_value(json_object_get(list, "name")), "cilium");
	assert_string_equal(json_string_value(json_object_get(list, NG_GENERATED_KEY)), "05-cilium.conf");
	plugins = json_object_get(list, "plugins");
	assert_int_equal(json_array_size(plugins), 2);
	/* The conf as it was (libcni keeps its name and cniVersion too). */
	assert_true(json_equal(json_array_get(plugins, 0), conf));
	assert_true(json_equal(json_array_get(plugins, 1), e));
	json_decref(list);

	json_decref(conf);
	conf = tu_json("{\"cniVersion\":\"0.3.1\",\"name\":\"x\",\"plugins\":[{\"type\":\"ptp\"}]}");
	assert_int_equal(ng_conf_to_conflist(conf, "10-x.conf", e, &list, &err), -1);
	assert_contains(err.msg, "a plugin list in a .conf/.json file");
	json_decref(conf);
	conf = tu_json("{\"cniVersion\":\"0.3.1\",\"type\":\"ptp\"}");
	assert_int_equal(ng_conf_to_conflist(conf, "10-x.conf", e, &list, &err), -1);
	assert_contains(err.msg, "needs \"name\" and \"cniVersion\"");
	json_decref(conf);
	json_decref(e);
}

/* ---- names ------------------------------------------------------------------- */

static void test_names(void **state)
{
	(void)state;
	static const char *const files[] = {"10-bridge.conf", "05-cilium.json", "a.conflist", "x.y.conf",
					    NULL};
	char out[NG_FILENAME_MAX + 1], longname[300];

	assert_true(ng_is_conf_name("a.conf"));
	assert_true(ng_is_conf_name("a.conflist"));
	assert_true(ng_is_conf_name("a.json"));
	assert_true(ng_is_conf_name(".hidden.conflist")); /* libcni reads dotfiles too */
	assert_false(ng_is_conf_name("a.conf.bak"));
	assert_false(ng_is_conf_name("a.conflist.cilium_bak"));
	assert_false(ng_is_conf_name("conf"));
	assert_false(ng_is_conf_name(".boxxkite-netguard.0123456789abcdef.tmp"));
	for (int i = 0; files[i]; i++) {
		/* Side files are never read as configs... */
		assert_int_equal(ng_backup_name(files[i], out, sizeof(out)), 0);
		assert_false(ng_is_conf_name(out));
		/* ...and a generated conflist sorts just before its source. */
		assert_int_equal(ng_derived_name(files[i], out, sizeof(out)), 0);
		assert_true(ng_is_conf_name(out));
		assert_true(strcmp(out, files[i]) < 0);
	}
	assert_int_equal(ng_derived_name("10-bridge.conf", out, sizeof(out)), 0);
	assert_string_equal(out, "10-bridge-boxxkite-netguard.conflist");
	/* Why not "10-bridge.conflist": it sorts after "10-bridge.conf". */
	memset(longname, 'a', 250);
	strcpy(longname + 250, ".conf");
	assert_int_equal(ng_derived_name(longname, out, sizeof(out)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_every_primary),
		cmocka_unit_test(test_merge_replaces_and_dedups),
		cmocka_unit_test(test_merge_tolerates_later_chained_plugin),
		cmocka_unit_test(test_merge_refusals),
		cmocka_unit_test(test_entry_shape),
		cmocka_unit_test(test_conf_to_conflist),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
