/* `status --names` (node/statusnames.h): the view's rows as the agent's
 * document (every name with its addresses, the tables that hold each,
 * each side's expiry, kept alive; the rows no name claims; one pod or
 * all) and the table read back from it. */
#include "testutil.h"

#include "base/clock.h"
#include "node/statusnames.h"

static void add_pod(struct ng_view *v, const char *name, bool learn)
{
	struct ng_view_pod p = {0};
	struct ng_view_name n = {.name = "api.example.com", .proto_ports = "tcp/443"};
	int64_t now = ng_wall_ms();
	struct ng_view_learned r = {.name = 0,
				    .proto = 6,
				    .p_lo = 443,
				    .p_hi = 443,
				    .pod_expires_ms = now + 30500,
				    .node_expires_ms = now + 20500};

	snprintf(p.ns, sizeof(p.ns), "sandboxes");
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.key, sizeof(p.key), "%s@eth0", name);
	snprintf(p.decision, sizeof(p.decision), "enforced");
	p.learn = learn;
	if (learn) {
		p.has_taught = p.guard = true;
		assert_int_equal(ng_vec_push(&p.taught_names, &n), 0);
		assert_int_equal(ng_ip_parse("10.0.0.1", &r.ip), 0);
		assert_int_equal(ng_vec_push(&p.taught, &r), 0);
		r.name = NG_VIEW_NAME_NONE;
		r.node_expires_ms = 0;
		r.kept_alive = true;
		assert_int_equal(ng_ip_parse("fd00::9", &r.ip), 0);
		assert_int_equal(ng_vec_push(&p.taught, &r), 0);
	}
	assert_int_equal(ng_vec_push(&v->pods, &p), 0);
}

static void test_document(void **state)
{
	(void)state;
	struct ng_view v = {0};
	json_t *doc, *pod, *a, *u;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	add_pod(&v, "web", true);
	add_pod(&v, "plain", false);
	doc = ng_status_names_json(&v, NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(doc, "pods")), 2);
	pod = json_array_get(json_object_get(doc, "pods"), 0);
	assert_string_equal(json_string_value(json_object_get(pod, "pod_name")), "web");
	a = json_array_get(json_object_get(json_array_get(json_object_get(pod, "names"), 0), "addresses"), 0);
	assert_string_equal(json_string_value(json_object_get(a, "address")), "10.0.0.1");
	assert_string_equal(json_string_value(json_object_get(a, "ports")), "443");
	assert_int_equal(json_array_size(json_object_get(a, "tables")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(a, "tables"), 1)), "guard");
	assert_in_range(json_integer_value(json_object_get(a, "podSecondsLeft")), 29, 30);
	assert_in_range(json_integer_value(json_object_get(a, "nodeSecondsLeft")), 19, 20);
	assert_false(json_is_true(json_object_get(a, "keptAlive")));
	u = json_array_get(json_object_get(pod, "unnamed"), 0);
	assert_string_equal(json_string_value(json_object_get(u, "address")), "fd00::9");
	assert_int_equal(json_array_size(json_object_get(u, "tables")), 2); /* pod, guard */
	assert_null(json_object_get(u, "nodeExpires"));
	assert_true(json_is_true(json_object_get(u, "keptAlive")));

	f = open_memstream(&text, &len);
	assert_int_equal(ng_status_names_table(doc, f), 2);
	fclose(f);
	assert_contains(text, "sandboxes/web\n  api.example.com tcp/443: 1 address(es)\n    10.0.0.1 ");
	assert_contains(text, "pod+guard+node");
	assert_contains(text, "(name not known: learned before the agent restarted)");
	assert_contains(text, "kept alive by a live connection");
	assert_contains(text, "sandboxes/plain: learns no names");
	free(text);
	json_decref(doc);

	doc = ng_status_names_json(&v, "sandboxes", "plain");
	assert_int_equal(json_array_size(json_object_get(doc, "pods")), 1);
	json_decref(doc);
	doc = ng_status_names_json(&v, "sandboxes", "nosuch");
	assert_int_equal(json_array_size(json_object_get(doc, "pods")), 0);
	json_decref(doc);
	ng_view_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
