/* The node's scrape: one HELP/TYPE per family whatever the number of pods,
 * escaped labels, cumulative histogram buckets, and (when promtool is
 * installed, as `make test` makes sure) `promtool check metrics` passes. */
#include "testutil.h"

#include <unistd.h>

#include "base/histogram.h"
#include "agent/metrics.h"
#include "agent/procmetrics.h"
#include "node/nodeview.h"
#include "state/invstats.h"

static void add_pod(struct ng_view *v, const char *key, const char *ns, const char *name,
		    const char *decision)
{
	struct ng_view_pod p;
	struct ng_view_counter c = {
		.table = "boxxkite_netguard", .category = "egress", .packets = 7, .bytes = 420};
	struct ng_view_name n = {.name = "*.example.com", .proto_ports = "tcp/443", .addresses = 2};

	memset(&p, 0, sizeof(p));
	snprintf(p.key, sizeof(p.key), "%s", key);
	snprintf(p.ns, sizeof(p.ns), "%s", ns);
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.container, sizeof(p.container), "%s", key);
	snprintf(p.decision, sizeof(p.decision), "%s", decision);
	if (!strcmp(decision, "enforced")) {
		p.read_ok = p.learn = p.checked = p.in_sync = true;
		p.learned[0] = 3;
		assert_int_equal(ng_vec_push(&p.counters, &c), 0);
		c.netdev = true;
		snprintf(c.category, sizeof(c.category), "raw");
		assert_int_equal(ng_vec_push(&p.counters, &c), 0);
		assert_int_equal(ng_vec_push(&p.names, &n), 0);
		p.drift_events = 2;
		p.has_agent = true;
		p.ac[NG_AC_ANSWERS] = 5;
	}
	assert_int_equal(ng_vec_push(&v->pods, &p), 0);
}

static char *render(const struct ng_view *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	ng_metrics_render(v, f);
	fclose(f);
	return text;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void fold(struct ng_view *v, const char *line)
{
	struct ng_inv inv;

	assert_int_equal(ng_inv_parse(line, strlen(line), &inv), 0);
	ng_invtotals_add(&v->inv, &inv);
}

static void build(struct ng_view *v)
{
	memset(v, 0, sizeof(*v));
	v->start_ms = 1764580000000;
	v->pod_metrics_limit = -1;
	add_pod(v, "aaaaaaaaaaaaaaaa@eth0", "sandboxes", "s1", "enforced");
	add_pod(v, "bbbbbbbbbbbbbbbb@eth0", "sandboxes", "s2", "enforced");
	add_pod(v, "cccccccccccccccc@eth0", "default", "web \"x\"\\\n", "skipped");
	add_pod(v, "dddddddddddddddd@eth0", "sandboxes", "bad", "refused");
	fold(v, "ADD enforced 800\n");
	fold(v, "ADD enforced 3000\n");
	fold(v, "ADD refused 400");
	fold(v, "DEL deleted 1200\n");
}

static void test_one_family_header_for_many_pods(void **state)
{
	struct ng_view v;
	char *t;

	(void)state;
	build(&v);
	t = render(&v);
	assert_int_equal(count(t, "# HELP boxxkite_netguard_pod_decision "), 1);
	assert_int_equal(count(t, "# TYPE boxxkite_netguard_denied_packets_total counter"), 1);
	assert_int_equal(count(t, "boxxkite_netguard_pod_decision{"), 4);
	assert_non_null(strstr(t,
			       "boxxkite_netguard_pod_decision{pod_namespace=\"sandboxes\",pod_name=\"bad\","
			       "sandbox_id=\"dddddddddddd\",decision=\"refused\"} 1\n"));
	assert_non_null(strstr(
		t, "boxxkite_netguard_denied_packets_total{pod_namespace=\"sandboxes\",pod_name=\"s1\","
		   "sandbox_id=\"aaaaaaaaaaaa\",table=\"netdev\",side=\"pod\",category=\"raw\"} 7\n"));
	assert_non_null(strstr(
		t, "boxxkite_netguard_learned_name_addresses{pod_namespace=\"sandboxes\",pod_name=\"s2\","
		   "sandbox_id=\"bbbbbbbbbbbb\",name=\"*.example.com\",ports=\"tcp/443\"} 2\n"));
	/* Not a netns path anywhere. */
	assert_null(strstr(t, "netns="));
	free(t);
	ng_view_free(&v);
}

static void test_label_values_escaped(void **state)
{
	struct ng_view v;
	char *t;

	(void)state;
	build(&v);
	t = render(&v);
	assert_non_null(strstr(t, "pod_name=\"web \\\"x\\\"\\\\\\n\""));
	free(t);
	ng_view_free(&v);
}

static void test_histogram_cumulative(void **state)
{
	struct ng_view v;
	char *t;

	(void)state;
	build(&v);
	t = render(&v);
	/* 400 and 800 us are <= 1 ms, 3000 us is not, all three <= 5 ms. */
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_bucket{verb=\"ADD\",le=\"0.0005\"} 1\n"));
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_bucket{verb=\"ADD\",le=\"0.001\"} 2\n"));
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_bucket{verb=\"ADD\",le=\"0.0025\"} 2\n"));
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_bucket{verb=\"ADD\",le=\"0.005\"} 3\n"));
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_bucket{verb=\"ADD\",le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "cni_invocation_duration_seconds_sum{verb=\"ADD\"} 0.004200\n"));
	assert_non_null(strstr(t, "cni_invocations_total{verb=\"ADD\",decision=\"enforced\"} 2\n"));
	assert_non_null(strstr(t, "cni_invocations_total{verb=\"DEL\",decision=\"deleted\"} 1\n"));
	free(t);
	ng_view_free(&v);
}

static void test_histogram_bounds(void **state)
{
	struct ng_hist h = {0};

	(void)state;
	ng_hist_observe(&h, 0);
	ng_hist_observe(&h, 500);
	ng_hist_observe(&h, 501);
	ng_hist_observe(&h, 99999999);
	assert_int_equal(ng_hist_cumulative(&h, 0), 2);
	assert_int_equal(ng_hist_cumulative(&h, 1), 3);
	assert_int_equal(ng_hist_cumulative(&h, NG_HIST_BUCKETS - 1), 3);
	assert_int_equal(h.count, 4);
}

static void test_promtool_accepts_the_scrape(void **state)
{
	struct ng_view v;
	FILE *p;
	char *t;
	int st;

	(void)state;
	if (access("/usr/bin/promtool", X_OK) != 0) {
		printf("promtool not installed (Debian prometheus): not run here; make test installs it\n");
		skip();
	}
	build(&v);
	t = render(&v);
	/* Its verdict is the exit status (3 for lint problems); any words
	 * it prints are problems too. */
	p = popen("out=$(/usr/bin/promtool check metrics 2>&1); r=$?; "
		  "if [ -n \"$out\" ]; then echo \"promtool: $out\" >&2; r=1; fi; exit $r",
		  "w");
	assert_non_null(p);
	fputs(t, p);
	st = pclose(p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	free(t);
	ng_view_free(&v);
}

/* --pod-metrics: per-pod samples while at most N pods, never with 0; the
 * node totals and the families' declarations always. */
static void test_pod_metrics_bound(void **state)
{
	struct ng_view v;
	char *t;

	(void)state;
	build(&v);
	v.pod_metrics_limit = 4; /* 4 pods: on */
	t = render(&v);
	assert_int_equal(count(t, "boxxkite_netguard_pod_decision{"), 4);
	assert_non_null(strstr(t, "\nboxxkite_netguard_agent_pod_metrics 1\n"));
	free(t);
	v.pod_metrics_limit = 3;
	t = render(&v);
	assert_int_equal(count(t, "pod_name="), 0);
	assert_int_equal(count(t, "# TYPE boxxkite_netguard_pod_decision gauge"), 1);
	assert_non_null(strstr(t, "boxxkite_netguard_agent_pods{decision=\"enforced\"} 2\n"));
	assert_non_null(strstr(t, "\nboxxkite_netguard_agent_pod_metrics 0\n"));
	free(t);
	v.pod_metrics_limit = 0;
	t = render(&v);
	assert_int_equal(count(t, "pod_name="), 0);
	free(t);
	ng_view_free(&v);
}

/* README's table of families (between its metrics-table markers) is
 * exactly what the agent serves, name and type: it cannot drift. Run from
 * the source tree's root (make unit). */
static void test_readme_lists_every_family(void **state)
{
	struct ng_view v;
	char *text = NULL, line[1024], served[8192] = "", listed[8192] = "";
	size_t len = 0, ns = 0, nl = 0;
	FILE *f = open_memstream(&text, &len), *readme = fopen("README.md", "r");
	bool in = false;

	(void)state;
	assert_non_null(readme);
	build(&v);
	ng_metrics_render(&v, f);
	ng_procmetrics_render(f);
	fclose(f);
	/* "name type;" for each family served, in order */
	for (const char *p = text; (p = strstr(p, "# TYPE ")); p++) {
		const char *eol = strchr(p, '\n');

		ns += (size_t)snprintf(served + ns, sizeof(served) - ns, "%.*s;", (int)(eol - p - 7), p + 7);
	}
	while (fgets(line, sizeof(line), readme)) {
		char name[128], type[32];

		if (strstr(line, "<!-- metrics-table"))
			in = true;
		else if (strstr(line, "<!-- /metrics-table"))
			in = false;
		else if (in && sscanf(line, "| `%127[^`]` | %31[a-z] |", name, type) == 2)
			nl += (size_t)snprintf(listed + nl, sizeof(listed) - nl, "%s %s;", name, type);
	}
	fclose(readme);
	assert_string_equal(listed, served);
	free(text);
	ng_view_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_family_header_for_many_pods),
		cmocka_unit_test(test_label_values_escaped),
		cmocka_unit_test(test_histogram_cumulative),
		cmocka_unit_test(test_histogram_bounds),
		cmocka_unit_test(test_promtool_accepts_the_scrape),
		cmocka_unit_test(test_readme_lists_every_family),
		cmocka_unit_test(test_pod_metrics_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
