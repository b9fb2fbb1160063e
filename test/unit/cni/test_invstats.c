/* The plugin's hand-off to the agent: the invocation line (format and
 * parse, torn and foreign lines refused) and the decision record (JSON
 * round trip, file names, refused records kept past DEL). */
#include "testutil.h"

#include <linux/netfilter.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/decision_log.h"
#include "cni/decisionrec.h"
#include "cni/handoff.h"
#include "cni/invstats.h"

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

static void fill(struct ng_decision *d, const char *decision)
{
	struct ng_record_table t = {.family = NFPROTO_NETDEV, .name = "boxxkite_netguard"};

	memset(d, 0, sizeof(*d));
	snprintf(d->key, sizeof(d->key), "abc123@eth0");
	snprintf(d->container_id, sizeof(d->container_id), "abc123");
	snprintf(d->ifname, sizeof(d->ifname), "eth0");
	snprintf(d->pod_namespace, sizeof(d->pod_namespace), "sandboxes");
	snprintf(d->pod_name, sizeof(d->pod_name), "s1");
	d->netns = strdup("/run/netns/x");
	snprintf(d->decision, sizeof(d->decision), "%s", decision);
	snprintf(d->reason, sizeof(d->reason), "namespace sandboxes is enforced");
	d->at_ms = 1764580000123;
	d->learn = true;
	assert_int_equal(ng_vec_push(&d->tables, &t), 0);
	d->conf = tu_json("{\"type\":\"boxxkite-netguard\"}");
}

static void test_decision_json_round_trip(void **state)
{
	struct ng_decision d, back;
	struct ng_err err = {0};
	json_t *o;

	(void)state;
	fill(&d, "enforced");
	o = ng_decision_to_json(&d);
	assert_non_null(o);
	assert_int_equal(ng_decision_from_json(o, &back, &err), 0);
	assert_string_equal(back.key, d.key);
	assert_string_equal(back.pod_name, "s1");
	assert_string_equal(back.decision, "enforced");
	assert_int_equal(back.at_ms, d.at_ms);
	assert_true(back.learn);
	assert_int_equal(back.tables.n, 1);
	assert_int_equal(back.tables.v[0].family, NFPROTO_NETDEV);
	assert_false(back.tables.v[0].in_node);
	assert_true(json_equal(back.conf, d.conf));
	json_object_del(o, "containerId");
	ng_decision_free(&back);
	assert_int_equal(ng_decision_from_json(o, &back, &err), -1);
	json_decref(o);
	ng_decision_free(&d);
}

static void test_decision_files(void **state)
{
	char dir[] = "/tmp/ng-dec-XXXXXX", path[256], key[64];
	struct ng_decision d, back;
	struct ng_err err = {0};
	bool refused;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill(&d, "refused");
	/* A refused ADD is kept past the runtime's DEL ... */
	assert_int_equal(ng_decision_write(dir, &d, &err), 0);
	ng_decision_remove(dir, d.key);
	snprintf(path, sizeof(path), "%s/decisions/abc123@eth0.refused.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(ng_decision_read(path, &back, &err), 0);
	assert_true(back.refused_file);
	ng_decision_free(&back);
	/* ... until the same pod gets through, and DEL removes that one. */
	snprintf(d.decision, sizeof(d.decision), "enforced");
	assert_int_equal(ng_decision_write(dir, &d, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/decisions/abc123@eth0.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	ng_decision_remove(dir, d.key);
	assert_int_equal(access(path, F_OK), -1);
	ng_decision_free(&d);
	snprintf(path, sizeof(path), "%s/decisions", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	/* No stateDir: nothing is written, nothing is created. */
	fill(&d, "enforced");
	assert_int_equal(ng_decision_write(dir, &d, &err), 0);
	assert_int_equal(access(dir, F_OK), -1);
	ng_decision_free(&d);

	assert_true(ng_decision_name("a@eth0.json", key, sizeof(key), &refused));
	assert_string_equal(key, "a@eth0");
	assert_false(refused);
	assert_true(ng_decision_name("a@eth0.refused.json", key, sizeof(key), &refused));
	assert_string_equal(key, "a@eth0");
	assert_true(refused);
	assert_false(ng_decision_name(".a@eth0.json.123.tmp", key, sizeof(key), &refused));
	assert_false(ng_decision_name("a@eth0.txt", key, sizeof(key), &refused));
}

/* A refused config still lands in the entry's stateDir (its parse may have
 * stopped before stateDir, leaving the default in the config struct). */
static void test_refusal_reaches_the_entry_state_dir(void **state)
{
	char dir[] = "/tmp/ng-hand-XXXXXX", text[256], path[300];
	struct ng_log log;
	json_t *root;
	struct ng_handoff h = {.state_dir = NG_DEFAULT_STATE_DIR,
			       .verb = "ADD",
			       .container_id = "c1",
			       .ifname = "eth0",
			       .pod_namespace = "sandboxes",
			       .pod_name = "p1",
			       .log = &log};
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(text, sizeof(text), "{\"stateDir\":\"%s\",\"bogus\":1}", dir);
	root = tu_json(text);
	h.root = root;
	ng_log_begin(&log, "ADD");
	snprintf(log.decision, sizeof(log.decision), "refused");
	snprintf(log.reason, sizeof(log.reason), "bogus: unknown key");
	ng_handoff(&h);
	snprintf(path, sizeof(path), "%s/decisions/c1@eth0.refused.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_int_equal(strncmp(text, "ADD refused ", 12), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/decisions", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_round_trip),
		cmocka_unit_test(test_line_refusals),
		cmocka_unit_test(test_decision_json_round_trip),
		cmocka_unit_test(test_decision_files),
		cmocka_unit_test(test_refusal_reaches_the_entry_state_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
