/* `status`: the node view through the agent's status file and back, the
 * table an operator reads, and /readyz's body. */
#include "testutil.h"

#include "agent/readyz.h"
#include "node/nodeview.h"
#include "node/statusjson.h"
#include "node/statustable.h"

static void pod(struct ng_view *v, const char *ns, const char *name, const char *decision, bool in_sync)
{
	struct ng_view_pod p;
	struct ng_view_counter c = {
		.table = "boxxkite_netguard", .category = "egress", .packets = 3, .bytes = 180};
	struct ng_view_name n = {.name = "*.example.com", .proto_ports = "tcp/443", .addresses = 2};

	memset(&p, 0, sizeof(p));
	snprintf(p.key, sizeof(p.key), "%s-id@eth0", name);
	snprintf(p.ns, sizeof(p.ns), "%s", ns);
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.container, sizeof(p.container), "%s-id", name);
	snprintf(p.decision, sizeof(p.decision), "%s", decision);
	snprintf(p.reason, sizeof(p.reason), "because %s", name);
	if (!strcmp(decision, "enforced")) {
		p.read_ok = p.pod_present = p.checked = true;
		p.in_sync = in_sync;
		p.has_node_side = true;
		p.node_present = in_sync;
		p.last_check_ms = 1000000 - 4000;
		if (!in_sync)
			snprintf(p.diff, sizeof(p.diff), "unexpected rule at position 14 of chain egress");
		p.drift_events = in_sync ? 0 : 3;
		assert_int_equal(ng_vec_push(&p.counters, &c), 0);
		c.in_node = true;
		c.netdev = true;
		c.packets = 4;
		assert_int_equal(ng_vec_push(&p.counters, &c), 0);
		assert_int_equal(ng_vec_push(&p.names, &n), 0);
		p.learned[0] = 2;
	}
	assert_int_equal(ng_vec_push(&v->pods, &p), 0);
}

static void build(struct ng_view *v)
{
	memset(v, 0, sizeof(*v));
	v->now_ms = 1000000;
	v->serving = true;
	v->ready.binary = v->ready.serving = true;
	pod(v, "sandboxes", "s1", "enforced", true);
	pod(v, "sandboxes", "s2", "enforced", false);
	pod(v, "default", "web", "skipped", false);
	pod(v, "sandboxes", "bad", "refused", false);
	v->pods.v[3].refused_file = true;
	snprintf(v->agent_version, sizeof(v->agent_version), "0.3.0");
	v->scans = 42;
	v->ready.conflist = true;
}

static char *table(const struct ng_view *v)
{
	/* static: the stream writes through these after this returns, as far
	 * as the compiler can tell. */
	static char *text;
	static size_t len;
	FILE *f = open_memstream(&text, &len);

	struct ng_status_source src = {.from_agent = true, .agent_running = true, .version = "0.3.0"};

	ng_status_table(v, 1000000, &src, f);
	fclose(f);
	return text;
}

static const char *line_of(const char *t, const char *pod)
{
	const char *l = strstr(t, pod);

	assert_non_null(l);
	return l;
}

static void test_table(void **state)
{
	struct ng_view v;
	char *t, *nl;
	const char *l;

	(void)state;
	build(&v);
	t = table(&v);
	assert_non_null(strstr(t, "agent: serving, version 0.3.0, ready, generation 42, view 0s old\n"));
	assert_non_null(strstr(t, "\npods: 4: 2 enforced (1 in-sync, 1 differ, 0 cannot-check, 0 not-yet), "
				  "1 skipped, 1 refused\n"));
	l = line_of(t, "sandboxes/s1 ");
	nl = strchr(l, '\n');
	*nl = '\0';
	assert_non_null(strstr(l, "enforced"));
	assert_non_null(strstr(l, "pod+node"));
	assert_non_null(strstr(l, "in-sync(4s)"));
	/* Deny counts summed over the tables of one category. */
	assert_non_null(strstr(l, "egress=7"));
	assert_non_null(strstr(l, "*.example.com=2"));
	*nl = '\n';
	l = line_of(t, "sandboxes/s2 ");
	assert_non_null(strstr(l, "pod+MISSING-node"));
	assert_non_null(strstr(l, "DIFFERS(4s)"));
	/* What differs is the reason shown. */
	assert_non_null(strstr(l, "unexpected rule at position 14"));
	l = line_of(t, "default/web ");
	assert_non_null(strstr(l, "skipped"));
	assert_non_null(strstr(l, "because web"));
	free(t);
	ng_view_free(&v);
}

static void test_json_round_trip(void **state)
{
	struct ng_view v, back;
	struct ng_err err = {0};
	json_t *o, *o2;

	(void)state;
	build(&v);
	o = ng_status_to_json(&v);
	assert_int_equal(ng_status_from_json(o, &back, &err), 0);
	o2 = ng_status_to_json(&back);
	/* What the agent writes is what status reads. */
	assert_true(json_equal(o, o2));
	assert_int_equal(back.pods.n, 4);
	assert_int_equal(back.pods.v[1].drift_events, 3);
	assert_false(back.pods.v[1].in_sync);
	assert_true(back.pods.v[1].has_node_side);
	assert_int_equal(back.pods.v[0].counters.n, 2);
	/* A refused record stays one: status merges records by key and flag. */
	assert_true(back.pods.v[3].refused_file);
	assert_false(back.pods.v[0].refused_file);
	assert_string_equal(back.agent_version, "0.3.0");
	assert_int_equal(back.scans, 42);
	assert_true(back.pods.v[0].counters.v[1].in_node);
	json_decref(o);
	json_decref(o2);
	ng_view_free(&back);
	o = tu_json("{\"version\":2,\"pods\":[]}");
	assert_int_equal(ng_status_from_json(o, &back, &err), -1);
	json_decref(o);
	ng_view_free(&v);
}

/* Every row's columns start where the header's do, whatever the cells hold. */
static void test_table_aligned(void **state)
{
	struct ng_view v;
	struct ng_view_name longname = {.name = "a-very-long-name.storage.example.com",
					.proto_ports = "tcp/443"};
	char *t, *line, *save = NULL;
	const char *titles[] = {"DECISION", "TABLES", "CHECK", "DENIED", "NAMES", "REASON"};
	long col[6];
	int rows = 0;

	(void)state;
	build(&v);
	assert_int_equal(ng_vec_push(&v.pods.v[0].names, &longname), 0);
	snprintf(v.pods.v[2].ns, sizeof(v.pods.v[2].ns), "a-namespace-longer-than-the-others");
	t = table(&v);
	line = strtok_r(t, "\n", &save);    /* agent: */
	line = strtok_r(NULL, "\n", &save); /* pods: */
	line = strtok_r(NULL, "\n", &save);
	assert_true(!strncmp(line, "POD ", 4));
	for (int c = 0; c < 6; c++) {
		const char *at = strstr(line, titles[c]);

		assert_non_null(at);
		col[c] = at - line;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		rows++;
		for (int c = 0; c < 6; c++) {
			/* a cell starts at its column, after two spaces */
			assert_true((long)strlen(line) > col[c]);
			assert_int_equal(line[col[c] - 1], ' ');
			assert_int_equal(line[col[c] - 2], ' ');
			assert_true(line[col[c]] != ' ');
		}
	}
	assert_int_equal(rows, 4);
	free(t);
	ng_view_free(&v);
}

/* The exit code by state: 3 differs wins, 4 unknown, 0 only when every
 * enforced pod was checked in sync. */
static void test_sum_exit(void **state)
{
	struct ng_view v;
	struct ng_status_sum s;
	char *t;

	(void)state;
	build(&v);
	ng_status_sum(&v, &s);
	assert_int_equal(s.pods, 4);
	assert_int_equal(s.enforced, 2);
	assert_int_equal(s.differs, 1);
	assert_int_equal(ng_status_exit(&s), 3);
	/* s2 repaired: all in sync */
	v.pods.v[1].in_sync = true;
	ng_status_sum(&v, &s);
	assert_int_equal(ng_status_exit(&s), 0);
	/* every enforced pod cannot-check: not 0 */
	for (int i = 0; i < 2; i++) {
		v.pods.v[i].checked = v.pods.v[i].read_ok = false;
		snprintf(v.pods.v[i].read_error, sizeof(v.pods.v[i].read_error),
			 "the pod's network namespace is gone");
	}
	ng_status_sum(&v, &s);
	assert_int_equal(s.cannot_check, 2);
	assert_int_equal(ng_status_exit(&s), 4);
	t = table(&v);
	assert_non_null(strstr(t, "cannot-check"));
	free(t);
	/* one not looked at yet */
	v.pods.v[0].read_error[0] = '\0';
	ng_status_sum(&v, &s);
	assert_int_equal(s.not_yet, 1);
	assert_int_equal(ng_status_exit(&s), 4);
	/* a missing pod-side table counts as differing */
	v.pods.v[0].read_ok = true;
	v.pods.v[0].pod_present = false;
	ng_status_sum(&v, &s);
	assert_int_equal(ng_status_exit(&s), 3);
	ng_view_free(&v);
	/* nothing recorded */
	memset(&v, 0, sizeof(v));
	ng_status_sum(&v, &s);
	assert_int_equal(ng_status_exit(&s), 0);
}

/* Without the agent's view the header says so and names this binary;
 * an agent of another version is named beside this one; not ready says why. */
static void test_header(void **state)
{
	struct ng_view v;
	struct ng_status_source src = {.version = "0.3.0"};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	build(&v);
	f = open_memstream(&text, &len);
	ng_status_table(&v, 1000000, &src, f);
	src.agent_running = true;
	ng_status_table(&v, 1000000, &src, f);
	src.from_agent = true;
	snprintf(v.agent_version, sizeof(v.agent_version), "0.2.0");
	v.ready.conflist = false;
	snprintf(v.ready.conflist_msg, sizeof(v.ready.conflist_msg), "05-loopback is not ours");
	v.now_ms = 1000000 - 7000;
	ng_status_table(&v, 1000000, &src, f);
	fclose(f);
	assert_non_null(strstr(text, "agent: not running: read from the kernel now (status 0.3.0)\n"));
	assert_non_null(strstr(
		text, "agent: running, but its view is stale or unreadable: read from the kernel now"));
	assert_non_null(strstr(text,
			       "agent: serving, version 0.2.0 (this binary 0.3.0), NOT ready: 05-loopback is "
			       "not ours, generation 42, view 7s old\n"));
	free(text);
	ng_view_free(&v);
}

static void test_readyz_body(void **state)
{
	struct ng_ready r = {.binary = true, .conflist = false, .serving = true};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	snprintf(r.conflist_msg, sizeof(r.conflist_msg), "no network config in /etc/cni/net.d");
	assert_false(ng_readyz_render(&r, f));
	r.conflist = true;
	assert_true(ng_readyz_render(&r, f));
	fclose(f);
	assert_non_null(strstr(text, "FAIL conflist: no network config in /etc/cni/net.d\n"));
	assert_non_null(strstr(text, "ok binary: "));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),         cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_table_aligned), cmocka_unit_test(test_sum_exit),
		cmocka_unit_test(test_header),        cmocka_unit_test(test_readyz_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
