/* What the agent writes to the API (agent/kobj.h): the Event and the
 * condition patch, as the API's types want them. */
#include "testutil.h"

#include "agent/kobj.h"
#include "agent/kpod.h"

#define T_MS 1764650100000LL /* 2025-12-02T04:35:00Z */

static const char *str(const json_t *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	return json_string_value(json_object_get(o, path));
}

static void test_event(void **state)
{
	struct ng_kobj_pod pod = {"sandboxes", "w1", "u-1"};
	json_t *e = ng_kobj_event(&pod, "Warning", "NetguardGrantRefused", "outside\nthe envelope", "node-1",
				  T_MS);

	(void)state;
	assert_non_null(e);
	assert_string_equal(str(e, "kind"), "Event");
	assert_string_equal(str(e, "apiVersion"), "v1");
	assert_string_equal(str(e, "metadata.namespace"), "sandboxes");
	assert_string_equal(str(e, "metadata.generateName"), "w1.netguard-");
	assert_string_equal(str(e, "involvedObject.kind"), "Pod");
	assert_string_equal(str(e, "involvedObject.name"), "w1");
	assert_string_equal(str(e, "involvedObject.namespace"), "sandboxes");
	assert_string_equal(str(e, "involvedObject.uid"), "u-1");
	assert_string_equal(str(e, "type"), "Warning");
	assert_string_equal(str(e, "reason"), "NetguardGrantRefused");
	/* control characters never reach the API */
	assert_string_equal(str(e, "message"), "outside the envelope");
	assert_string_equal(str(e, "source.component"), "boxxkite-netguard");
	assert_string_equal(str(e, "reportingInstance"), "node-1");
	assert_string_equal(str(e, "firstTimestamp"), "2025-12-02T04:35:00Z");
	assert_int_equal(json_integer_value(json_object_get(e, "count")), 1);
	json_decref(e);
	/* no uid known yet: none sent (an empty uid would name no pod) */
	pod.uid = "";
	e = ng_kobj_event(&pod, "Normal", "NetguardEnforced", "ok", "node-1", T_MS);
	assert_null(json_object_get(json_object_get(e, "involvedObject"), "uid"));
	json_decref(e);
}

static void test_condition(void **state)
{
	json_t *p = ng_kobj_condition_patch(true, "Enforced", "verified", T_MS), *c;

	(void)state;
	assert_non_null(p);
	c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(p, "status"), "conditions")), 1);
	assert_string_equal(str(c, "type"), NG_KPOD_CONDITION);
	assert_string_equal(str(c, "status"), "True");
	assert_string_equal(str(c, "reason"), "Enforced");
	assert_string_equal(str(c, "lastTransitionTime"), "2025-12-02T04:35:00Z");
	/* nothing but status.conditions: the patch touches no other field */
	assert_int_equal(json_object_size(p), 1);
	assert_int_equal(json_object_size(json_object_get(p, "status")), 1);
	json_decref(p);
	p = ng_kobj_condition_patch(false, "NotEnforced", "drift", T_MS);
	c = json_array_get(json_object_get(json_object_get(p, "status"), "conditions"), 0);
	assert_string_equal(str(c, "status"), "False");
	json_decref(p);
}

/* The message bound: cut on a UTF-8 boundary, never past NG_KOBJ_MSG_MAX. */
static void test_clean(void **state)
{
	char in[NG_KOBJ_MSG_MAX + 10], out[NG_KOBJ_MSG_MAX + 1];

	(void)state;
	memset(in, 'a', sizeof(in));
	in[sizeof(in) - 1] = '\0';
	/* a two-byte character straddling the cut */
	in[NG_KOBJ_MSG_MAX - 1] = (char)0xc3;
	in[NG_KOBJ_MSG_MAX] = (char)0xa9;
	ng_kobj_clean(in, out, sizeof(out));
	assert_int_equal(strlen(out), NG_KOBJ_MSG_MAX - 1);
	ng_kobj_clean("a\tb\x7f"
		      "c",
		      out, sizeof(out));
	assert_string_equal(out, "a b c");
	ng_kobj_clean("short", out, 4);
	assert_string_equal(out, "sho");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_condition),
		cmocka_unit_test(test_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
