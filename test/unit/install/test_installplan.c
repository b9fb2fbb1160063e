/* The installer's directory plan, pure: which file runtimes read, what gets
 * written and removed, in which order. No file is touched: listings are
 * built in memory and plans are "applied" to them here. */
#include "conflist_fixtures.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_conflist_roundtrip),
		cmocka_unit_test(test_plan_primary_rewrites),
		cmocka_unit_test(test_plan_single_plugin_conf),
		cmocka_unit_test(test_plan_new_primary_sorts_first),
		cmocka_unit_test(test_plan_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
