/* The watch's parsers (agent/kpod.h): pods, lists, watch lines, and what
 * a hostile or broken API can send. */
#include "testutil.h"

#include "agent/kpod.h"

#define POD(ann)                                                                                          \
	"{\"metadata\":{\"name\":\"w1\",\"namespace\":\"sandboxes\",\"uid\":\"u-1\",\"resourceVersion\":" \
	"\"42\"" ann "},\"spec\":{\"nodeName\":\"node-1\",\"readinessGates\":[{\"conditionType\":\"x\"}," \
	"{\"conditionType\":\"netguard.boxxkite.io/enforced\"}]}}"

static void parse_pod(const char *text, struct ng_kpod *p, int want)
{
	json_t *j = tu_json(text);
	struct ng_err err = {0};

	assert_int_equal(ng_kpod_from_json(j, p, &err), want);
	json_decref(j);
}

static void test_pod_fields(void **state)
{
	struct ng_kpod p;

	(void)state;
	parse_pod(POD(",\"annotations\":{\"netguard.boxxkite.io/egress\":\"10.1.2.3:443\",\"a\":\"b\"}"), &p,
		  0);
	assert_string_equal(p.ns, "sandboxes");
	assert_string_equal(p.name, "w1");
	assert_string_equal(p.uid, "u-1");
	assert_string_equal(p.rv, "42");
	assert_string_equal(p.node, "node-1");
	assert_true(p.readable);
	assert_true(p.gate);
	assert_string_equal(p.egress, "10.1.2.3:443");
	ng_kpod_free(&p);
	/* no annotations at all: readable, no grant */
	parse_pod(POD(""), &p, 0);
	assert_true(p.readable);
	assert_null(p.egress);
	ng_kpod_free(&p);
	parse_pod(POD(",\"annotations\":null"), &p, 0);
	assert_true(p.readable);
	assert_null(p.egress);
	ng_kpod_free(&p);
}

/* Annotations the API cannot give as strings: the pod keeps what it has
 * (readable false), never "no grants". */
static void test_pod_unreadable(void **state)
{
	static const char *const bad[] = {
		POD(",\"annotations\":[\"netguard.boxxkite.io/egress\"]"),
		POD(",\"annotations\":{\"netguard.boxxkite.io/egress\":[\"10.1.2.3:443\"]}"),
		POD(",\"annotations\":{\"netguard.boxxkite.io/egress\":null}"),
		POD(",\"annotations\":{\"other\":5}"),
		POD(",\"annotations\":\"x\""),
	};
	struct ng_kpod p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse_pod(bad[i], &p, 0);
		assert_false(p.readable);
		assert_null(p.egress);
		ng_kpod_free(&p);
	}
}

static void test_pod_refused(void **state)
{
	static const char *const bad[] = {
		"[]",
		"{}",
		"{\"metadata\":5}",
		"{\"metadata\":{\"name\":\"a\"}}",
		"{\"metadata\":{\"namespace\":\"a\"}}",
		"{\"metadata\":{\"name\":\"\",\"namespace\":\"a\"}}",
		"{\"metadata\":{\"name\":5,\"namespace\":\"a\"}}",
	};
	struct ng_kpod p;
	char big[400], text[600];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		parse_pod(bad[i], &p, -1);
	/* A name too long for the record is refused, never cut (a cut name
	 * names another pod). */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"a\"}}", big);
	parse_pod(text, &p, -1);
}

static void test_list(void **state)
{
	const char *text = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"777\"},\"items\":[" POD(
		"") ","
		    "{\"metadata\":{}}," POD(",\"annotations\":{\"netguard.boxxkite.io/egress\":\"x\"}") "]}";
	ng_kpod_vec v = {0};
	char rv[NG_KPOD_RV_MAX];
	size_t skipped;
	struct ng_err err = {0};

	(void)state;
	assert_int_equal(ng_kpod_list_parse(text, strlen(text), &v, rv, &skipped, &err), 0);
	assert_string_equal(rv, "777");
	assert_int_equal(v.n, 2);
	assert_int_equal(skipped, 1);
	assert_string_equal(v.v[1].egress, "x");
	ng_kpod_vec_free(&v);
	/* no version, not JSON, items not a list */
	assert_int_equal(ng_kpod_list_parse("{\"items\":[]}", 12, &v, rv, &skipped, &err), -1);
	assert_int_equal(ng_kpod_list_parse("{", 1, &v, rv, &skipped, &err), -1);
	text = "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":{}}";
	assert_int_equal(ng_kpod_list_parse(text, strlen(text), &v, rv, &skipped, &err), -1);
	ng_kpod_vec_free(&v);
}

static void watch(const char *line, struct ng_kwatch_event *e, int want)
{
	struct ng_err err = {0};

	assert_int_equal(ng_kwatch_parse(line, strlen(line), e, &err), want);
}

static void test_watch_lines(void **state)
{
	struct ng_kwatch_event e;

	(void)state;
	watch("{\"type\":\"MODIFIED\",\"object\":" POD(
		      ",\"annotations\":{\"netguard.boxxkite.io/egress\":\"a:1\"}") "}",
	      &e, 0);
	assert_int_equal(e.type, NG_KW_MODIFIED);
	assert_string_equal(e.pod.egress, "a:1");
	assert_string_equal(e.pod.rv, "42");
	ng_kwatch_event_free(&e);
	watch("{\"type\":\"ADDED\",\"object\":" POD("") "}", &e, 0);
	assert_int_equal(e.type, NG_KW_ADDED);
	ng_kwatch_event_free(&e);
	watch("{\"type\":\"DELETED\",\"object\":" POD("") "}", &e, 0);
	assert_int_equal(e.type, NG_KW_DELETED);
	ng_kwatch_event_free(&e);
	watch("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
	      "\"9001\"}}}",
	      &e, 0);
	assert_int_equal(e.type, NG_KW_BOOKMARK);
	assert_string_equal(e.pod.rv, "9001");
	ng_kwatch_event_free(&e);
	watch("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":\"too old\"}}",
	      &e, 0);
	assert_int_equal(e.type, NG_KW_ERROR);
	assert_int_equal(e.code, 410);
	assert_string_equal(e.message, "too old");
	ng_kwatch_event_free(&e);
}

static void test_watch_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"null",
		"[]",
		"{\"type\":\"ADDED\"}",
		"{\"type\":\"RENAMED\",\"object\":{}}",
		"{\"type\":5,\"object\":{}}",
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
		"{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}", /* duplicate keys */
		"{\"type\":\"ADDED\",\"object\":" POD("") "} trailing",
	};
	struct ng_kwatch_event e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		watch(bad[i], &e, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_fields),  cmocka_unit_test(test_pod_unreadable),
		cmocka_unit_test(test_pod_refused), cmocka_unit_test(test_list),
		cmocka_unit_test(test_watch_lines), cmocka_unit_test(test_watch_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
