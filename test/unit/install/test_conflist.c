/* The installer's merge, pure: conflist merging and stripping on the configs
 * real primaries write (fixtures/conflists/), entry validation through the
 * plugin's own parser, the .conf conversion, the directory plan (which file
 * runtimes read, what gets written and removed, in which order), and the
 * watcher's fight detection. No file is touched: listings are built in
 * memory and plans are "applied" to them here. */
#include "testutil.h"

#include <libgen.h>

#include "cni/confdir.h"
#include "install/conflist.h"
#include "install/installplan.h"
#include "install/watch.h"

static const char *const LISTS[] = {
	"10-containerd-net.conflist", "10-kindnet.conflist", "10-flannel.conflist",
	"10-calico.conflist",         "05-cilium.conflist",  NULL,
};

/* ---- helpers --------------------------------------------------------------- */

static char *fixture_text(const char *name, size_t *len)
{
	char file[4096], path[8192];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(path, sizeof(path), "%s/fixtures/conflists/%s", dirname(file), name);
	f = fopen(path, "r");
	if (!f || !buf)
		fail_msg("cannot read fixture %s", path);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static json_t *fixture(const char *name)
{
	size_t len;
	char *t = fixture_text(name, &len);
	json_t *j = tu_json(t);

	free(t);
	return j;
}

static json_t *entry(void)
{
	size_t len;
	char *t = fixture_text("entry.json", &len);
	struct ng_err err = {0};
	json_t *e = NULL;

	if (ng_entry_parse(t, len, &e, &err) < 0)
		fail_msg("entry.json refused: %s", err.msg);
	free(t);
	return e;
}

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

static void add_file(ng_dir_listing *dir, const char *name, const char *fixture_name, unsigned mode)
{
	size_t len;
	char *t = fixture_text(fixture_name, &len);

	assert_int_equal(ng_listing_add(dir, name, NG_FILE_REGULAR, t, len, mode), 0);
	free(t);
}

static void add_text(ng_dir_listing *dir, const char *name, const char *text)
{
	assert_int_equal(ng_listing_add(dir, name, NG_FILE_REGULAR, text, strlen(text), 0644), 0);
}

static struct ng_dir_file *find(ng_dir_listing *dir, const char *name)
{
	for (size_t i = 0; i < dir->n; i++)
		if (!strcmp(dir->v[i].name, name))
			return &dir->v[i];
	return NULL;
}

static void drop(ng_dir_listing *dir, const char *name)
{
	struct ng_dir_file *f = find(dir, name);

	if (!f)
		return;
	free(f->name);
	free(f->text);
	*f = dir->v[--dir->n];
}

/* What install.c does with a plan, on the in-memory listing. */
static void apply(ng_dir_listing *dir, const struct ng_plan *plan)
{
	for (size_t i = 0; i < plan->acts.n; i++) {
		const struct ng_action *a = &plan->acts.v[i];

		drop(dir, a->name);
		if (a->op == NG_ACT_WRITE)
			assert_int_equal(
				ng_listing_add(dir, a->name, NG_FILE_REGULAR, a->text, a->len, a->mode), 0);
	}
}

static void plan_ok(const ng_dir_listing *dir, const json_t *e, struct ng_plan *plan)
{
	struct ng_err err = {0};

	if (ng_plan_install(dir, e, plan, &err) < 0)
		fail_msg("plan refused: %s", err.msg);
}

static const char *plan_error(const ng_dir_listing *dir, const json_t *e, int *code)
{
	static struct ng_err err;
	struct ng_plan plan;

	memset(&err, 0, sizeof(err));
	if (ng_plan_install(dir, e, &plan, &err) == 0) {
		ng_plan_free(&plan);
		fail_msg("plan accepted, expected a refusal");
	}
	if (code)
		*code = err.code;
	return err.msg;
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

/* ---- the directory plan ------------------------------------------------------ */

static void test_plan_conflist_roundtrip(void **state)
{
	(void)state;
	json_t *e = entry();
	ng_dir_listing dir = {0};
	struct ng_plan plan;
	struct ng_err err = {0};
	size_t olen;
	char *orig = fixture_text("10-kindnet.conflist", &olen);
	struct ng_dir_file *f;

	add_file(&dir, "10-kindnet.conflist", "10-kindnet.conflist", 0640);
	add_text(&dir, "99-loopback.conf",
		 "{\"cniVersion\":\"0.3.1\",\"name\":\"lo\",\"type\":\"loopback\"}");
	add_text(&dir, "10-kindnet.conflist.bak", "not json: runtimes never read it");
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "10-kindnet.conflist");
	assert_false(plan.entry_was_present);
	/* The original bytes are saved first, then the merge, mode kept. */
	assert_int_equal(plan.acts.n, 2);
	assert_int_equal(plan.acts.v[0].op, NG_ACT_WRITE);
	assert_string_equal(plan.acts.v[0].name, ".boxxkite-netguard.10-kindnet.conflist.orig");
	assert_int_equal(plan.acts.v[0].mode, 0600);
	assert_int_equal(plan.acts.v[0].len, olen);
	assert_memory_equal(plan.acts.v[0].text, orig, olen);
	assert_string_equal(plan.acts.v[1].name, "10-kindnet.conflist");
	assert_int_equal(plan.acts.v[1].mode, 0640);
	apply(&dir, &plan);
	ng_plan_free(&plan);

	/* Run again: nothing to do. */
	plan_ok(&dir, e, &plan);
	assert_int_equal(plan.acts.n, 0);
	assert_true(plan.entry_was_present);
	ng_plan_free(&plan);

	/* A new entry (ConfigMap edit): rewritten, the saved original kept. */
	json_object_set_new(e, "denyAction", json_string("drop"));
	plan_ok(&dir, e, &plan);
	assert_int_equal(plan.acts.n, 1);
	assert_string_equal(plan.acts.v[0].name, "10-kindnet.conflist");
	apply(&dir, &plan);
	ng_plan_free(&plan);

	/* Uninstall: the primary's file back byte for byte, side file gone,
	 * nothing else touched. */
	assert_int_equal(ng_plan_uninstall(&dir, &plan, &err), 0);
	assert_int_equal(plan.acts.n, 2);
	assert_string_equal(plan.acts.v[0].name, "10-kindnet.conflist");
	assert_contains(plan.acts.v[0].what, "byte for byte");
	assert_int_equal(plan.acts.v[1].op, NG_ACT_REMOVE);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	f = find(&dir, "10-kindnet.conflist");
	assert_int_equal(f->len, olen);
	assert_memory_equal(f->text, orig, olen);
	assert_int_equal(f->mode, 0640);
	assert_null(find(&dir, ".boxxkite-netguard.10-kindnet.conflist.orig"));
	assert_int_equal(dir.n, 3);

	/* A temp file left by an installer killed mid-write goes too. */
	add_text(&dir, ".boxxkite-netguard.0011223344556677.tmp", "{\"half\":");
	assert_int_equal(ng_plan_uninstall(&dir, &plan, &err), 0);
	assert_int_equal(plan.acts.n, 1);
	assert_string_equal(plan.acts.v[0].name, ".boxxkite-netguard.0011223344556677.tmp");
	ng_plan_free(&plan);
	free(orig);
	ng_listing_free(&dir);
	json_decref(e);
}

static void test_plan_primary_rewrites(void **state)
{
	(void)state;
	json_t *e = entry();
	ng_dir_listing dir = {0};
	struct ng_plan plan;
	struct ng_err err = {0};
	const char *rewritten = "{\"cniVersion\":\"0.3.1\",\"name\":\"kindnet\",\"plugins\":[{\"type\":"
				"\"ptp\",\"mtu\":1400}]}\n";
	struct ng_dir_file *f;

	add_file(&dir, "10-kindnet.conflist", "10-kindnet.conflist", 0644);
	plan_ok(&dir, e, &plan);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	/* kindnetd restarts and writes its config anew, without our entry. */
	drop(&dir, "10-kindnet.conflist");
	add_text(&dir, "10-kindnet.conflist", rewritten);
	plan_ok(&dir, e, &plan);
	/* The new original is what uninstall must restore now. */
	assert_int_equal(plan.acts.n, 2);
	assert_memory_equal(plan.acts.v[0].text, rewritten, strlen(rewritten));
	apply(&dir, &plan);
	ng_plan_free(&plan);
	assert_int_equal(ng_plan_uninstall(&dir, &plan, &err), 0);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	f = find(&dir, "10-kindnet.conflist");
	assert_string_equal(f->text, rewritten);

	/* Uninstall when the saved copy no longer matches (the primary changed
	 * its config and we merged without seeing its own version): the entry
	 * is still removed, the rest kept. */
	plan_ok(&dir, e, &plan);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	drop(&dir, ".boxxkite-netguard.10-kindnet.conflist.orig");
	add_text(&dir, ".boxxkite-netguard.10-kindnet.conflist.orig", "{\"stale\":true}");
	assert_int_equal(ng_plan_uninstall(&dir, &plan, &err), 0);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	f = find(&dir, "10-kindnet.conflist");
	{
		json_t *got = tu_json(f->text), *want = tu_json(rewritten);

		assert_true(json_equal(got, want));
		json_decref(got);
		json_decref(want);
	}
	assert_int_equal(dir.n, 1);
	ng_listing_free(&dir);
	json_decref(e);
}

static void test_plan_single_plugin_conf(void **state)
{
	(void)state;
	json_t *e = entry(), *list;
	ng_dir_listing dir = {0};
	struct ng_plan plan;
	struct ng_err err = {0};
	size_t olen;
	char *orig = fixture_text("10-bridge.conf", &olen);

	add_file(&dir, "10-bridge.conf", "10-bridge.conf", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "10-bridge-boxxkite-netguard.conflist");
	assert_int_equal(plan.acts.n, 1);
	assert_string_equal(plan.acts.v[0].name, "10-bridge-boxxkite-netguard.conflist");
	assert_int_equal(plan.acts.v[0].mode, 0644);
	list = tu_json(plan.acts.v[0].text);
	assert_int_equal(ng_conflist_count_ours(list), 1);
	json_decref(list);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	/* Settled; the primary's file untouched. */
	plan_ok(&dir, e, &plan);
	assert_int_equal(plan.acts.n, 0);
	ng_plan_free(&plan);
	assert_memory_equal(find(&dir, "10-bridge.conf")->text, orig, olen);

	/* The primary rewrites its .conf with a new subnet: regenerated. */
	drop(&dir, "10-bridge.conf");
	add_text(&dir, "10-bridge.conf",
		 "{\"cniVersion\":\"0.4.0\",\"name\":\"mynet\",\"type\":\"bridge\",\"mtu\":1400}");
	plan_ok(&dir, e, &plan);
	assert_int_equal(plan.acts.n, 1);
	assert_contains(plan.acts.v[0].text, "1400");
	apply(&dir, &plan);
	ng_plan_free(&plan);

	/* Uninstall: only our file goes. */
	assert_int_equal(ng_plan_uninstall(&dir, &plan, &err), 0);
	assert_int_equal(plan.acts.n, 1);
	assert_int_equal(plan.acts.v[0].op, NG_ACT_REMOVE);
	assert_string_equal(plan.acts.v[0].name, "10-bridge-boxxkite-netguard.conflist");
	ng_plan_free(&plan);
	free(orig);
	ng_listing_free(&dir);
	json_decref(e);
}

static void test_plan_new_primary_sorts_first(void **state)
{
	(void)state;
	json_t *e = entry();
	ng_dir_listing dir = {0};
	struct ng_plan plan;

	/* Merged into a derived conflist for 10-bridge.conf... */
	add_file(&dir, "10-bridge.conf", "10-bridge.conf", 0644);
	plan_ok(&dir, e, &plan);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	/* ...then Cilium starts and writes its own config, first in line. */
	add_file(&dir, "05-cilium.conflist", "05-cilium.conflist", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "05-cilium.conflist");
	/* Writes first, then the stale generated copy goes. */
	assert_int_equal(plan.acts.n, 3);
	assert_int_equal(plan.acts.v[0].op, NG_ACT_WRITE);
	assert_int_equal(plan.acts.v[1].op, NG_ACT_WRITE);
	assert_string_equal(plan.acts.v[1].name, "05-cilium.conflist");
	assert_int_equal(plan.acts.v[2].op, NG_ACT_REMOVE);
	assert_string_equal(plan.acts.v[2].name, "10-bridge-boxxkite-netguard.conflist");
	apply(&dir, &plan);
	ng_plan_free(&plan);

	/* The primary's .conf goes away while ours would still sort first:
	 * the stale copy must not stay in line. */
	ng_listing_free(&dir);
	add_file(&dir, "10-bridge.conf", "10-bridge.conf", 0644);
	plan_ok(&dir, e, &plan);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	drop(&dir, "10-bridge.conf");
	add_file(&dir, "20-calico.conflist", "10-calico.conflist", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "20-calico.conflist");
	assert_int_equal(plan.acts.v[plan.acts.n - 1].op, NG_ACT_REMOVE);
	apply(&dir, &plan);
	ng_plan_free(&plan);
	assert_null(find(&dir, "10-bridge-boxxkite-netguard.conflist"));

	/* A .conf and a .conflist of the same name: the .conf is first. */
	ng_listing_free(&dir);
	add_file(&dir, "10-x.conflist", "10-flannel.conflist", 0644);
	add_file(&dir, "10-x.conf", "10-bridge.conf", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "10-x-boxxkite-netguard.conflist");
	ng_plan_free(&plan);
	ng_listing_free(&dir);
	json_decref(e);
}

static void test_plan_refusals(void **state)
{
	(void)state;
	json_t *e = entry();
	ng_dir_listing dir = {0};
	struct ng_plan plan;
	int code;

	/* Nothing yet: the caller may wait. Side and temp files do not count. */
	add_text(&dir, ".boxxkite-netguard.10-x.conflist.orig", "{}");
	add_text(&dir, ".boxxkite-netguard.0011223344556677.tmp", "{}");
	add_text(&dir, "10-x.conflist.cilium_bak", "{}");
	assert_contains(plan_error(&dir, e, &code), "no network config");
	assert_int_equal(code, NG_E_TRY_AGAIN);

	/* A symlinked primary. A later symlink does not matter. */
	assert_int_equal(ng_listing_add(&dir, "10-a.conflist", NG_FILE_SYMLINK, NULL, 0, 0777), 0);
	assert_contains(plan_error(&dir, e, NULL), "10-a.conflist is a symlink");
	add_file(&dir, "05-a.conflist", "05-cilium.conflist", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "05-a.conflist");
	ng_plan_free(&plan);

	/* A dotfile sorts first and is read by runtimes: so by us. */
	add_text(&dir, ".00-broken.json", "{\"cniVersion\":");
	assert_contains(plan_error(&dir, e, NULL), ".00-broken.json: not valid JSON");
	ng_listing_free(&dir);

	/* Duplicate keys in the primary. */
	add_text(&dir, "10-a.conflist",
		 "{\"cniVersion\":\"0.3.1\",\"name\":\"a\",\"name\":\"b\",\"plugins\":[{\"type\":\"ptp\"}]}");
	assert_contains(plan_error(&dir, e, NULL), "duplicate");
	ng_listing_free(&dir);

	/* A file at our generated name that is not ours sorts first, so it is
	 * the primary (and merged into), never overwritten as "ours". */
	add_file(&dir, "10-bridge.conf", "10-bridge.conf", 0644);
	add_file(&dir, "10-bridge-boxxkite-netguard.conflist", "10-flannel.conflist", 0644);
	plan_ok(&dir, e, &plan);
	assert_string_equal(plan.active, "10-bridge-boxxkite-netguard.conflist");
	ng_plan_free(&plan);
	ng_listing_free(&dir);

	/* The entry is refused against the primary's cniVersion. */
	add_text(&dir, "10-a.conflist",
		 "{\"cniVersion\":\"0.2.0\",\"name\":\"a\",\"plugins\":[{\"type\":\"ptp\"}]}");
	assert_contains(plan_error(&dir, e, &code), "not supported");
	ng_listing_free(&dir);
	json_decref(e);
}

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
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_every_primary),
		cmocka_unit_test(test_merge_replaces_and_dedups),
		cmocka_unit_test(test_merge_tolerates_later_chained_plugin),
		cmocka_unit_test(test_merge_refusals),
		cmocka_unit_test(test_entry_shape),
		cmocka_unit_test(test_conf_to_conflist),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_plan_conflist_roundtrip),
		cmocka_unit_test(test_plan_primary_rewrites),
		cmocka_unit_test(test_plan_single_plugin_conf),
		cmocka_unit_test(test_plan_new_primary_sorts_first),
		cmocka_unit_test(test_plan_refusals),
		cmocka_unit_test(test_fight),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
