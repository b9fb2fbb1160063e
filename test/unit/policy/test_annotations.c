/* Pod annotations, envelope containment and pod selection. */
#include "testutil.h"

#include "policy/annotations.h"
#include "policy/select.h"

struct fixture {
	struct ng_config cfg;
	json_t *conf;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct ng_err err = {0};

	f->conf = tu_json(BASE_CONF);
	if (ng_config_parse(f->conf, &f->cfg, &err) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	ng_config_free(&f->cfg);
	json_decref(f->conf);
	free(f);
	return 0;
}

/* Parses annotations given as a JSON object text; returns the code. */
static int ann(struct fixture *f, const char *annotations, struct ng_annotations *out, struct ng_err *err)
{
	json_t *root = json_deep_copy(f->conf);
	int r;

	if (annotations) {
		json_t *rc = json_object();

		json_object_set_new(rc, "io.kubernetes.cri.pod-annotations", tu_json(annotations));
		json_object_set_new(root, "runtimeConfig", rc);
	}
	memset(err, 0, sizeof(*err));
	r = ng_annotations_parse(root, &f->cfg, out, err);
	json_decref(root);
	return r == 0 ? 0 : err->code;
}

static void ann_refused(struct fixture *f, const char *annotations, int code, const char *why)
{
	struct ng_annotations a;
	struct ng_err err;
	int got = ann(f, annotations, &a, &err);

	ng_annotations_free(&a);
	if (got != code)
		fail_msg("%s: want %d, got %d (%s)", annotations, code, got, err.msg);
	assert_contains(err.msg, why);
}

static void test_absent_and_foreign(void **state)
{
	struct fixture *f = *state;
	struct ng_annotations a;
	struct ng_err err;

	assert_int_equal(ann(f, NULL, &a, &err), 0);
	assert_false(a.passed);
	assert_int_equal(a.enforce, -1);
	ng_annotations_free(&a);
	assert_int_equal(ann(f, "{\"app\":\"sandbox\",\"other.io/x\":\"CHANGEME\"}", &a, &err), 0);
	assert_true(a.passed);
	assert_int_equal(a.grants.n, 0);
	ng_annotations_free(&a);
}

static void test_grants_inside_envelope(void **state)
{
	struct fixture *f = *state;
	struct ng_annotations a;
	struct ng_err err;

	assert_int_equal(ann(f,
			     "{\"netguard.boxxkite.io/egress\":\" 10.1.2.3:443 , "
			     "s3.example.com:443,udp://10.9.0.0/16:5353\"}",
			     &a, &err),
			 0);
	assert_int_equal(a.grants.n, 3);
	assert_int_equal(a.grants.v[1].kind, NG_HOST_NAME);
	assert_int_equal(a.grants.v[2].proto, NG_PROTO_UDP);
	ng_annotations_free(&a);
}

static void test_grants_refused(void **state)
{
	struct fixture *f = *state;

	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"11.0.0.1:443\"}", NG_E_ENVELOPE,
		    "grant \"11.0.0.1:443\": outside egress.envelope");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3:444\"}", NG_E_ENVELOPE,
		    "outside egress.envelope");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"udp://10.1.2.3:443\"}", NG_E_ENVELOPE, "outside");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3:443,example.com:443\"}", NG_E_ENVELOPE,
		    "\"example.com:443\"");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"evilexample.com:443\"}", NG_E_ENVELOPE, "outside");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"udp://10.0.0.0/8:4000-5000\"}", NG_E_ENVELOPE,
		    "outside");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"[fd00::1]:443\"}", NG_E_ENVELOPE, "outside");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"0.0.0.0/0:443\"}", NG_E_ENVELOPE, "0.0.0.0/0");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"*.example.com:443\"}", NG_E_ANNOTATION,
		    "only allowed in egress.envelope");
}

static void test_grant_syntax_refused(void **state)
{
	struct fixture *f = *state;
	char big[NG_ANN_VALUE_MAX + 64];

	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3\"}", NG_E_ANNOTATION, "port is required");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3:443,,10.1.2.4:443\"}", NG_E_ANNOTATION,
		    "entry 2 is empty");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"\"}", NG_E_ANNOTATION, "entry 1 is empty");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3:443,\"}", NG_E_ANNOTATION,
		    "entry 2 is empty");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":\"CHANGEME\"}", NG_E_ANNOTATION, "CHANGEME");
	ann_refused(f, "{\"netguard.boxxkite.io/egress\":42}", NG_E_ANNOTATION, "must be a string");

	snprintf(big, sizeof(big), "{\"netguard.boxxkite.io/egress\":\"");
	memset(big + strlen(big), 'a', NG_ANN_VALUE_MAX + 1);
	strcpy(big + strlen("{\"netguard.boxxkite.io/egress\":\"") + NG_ANN_VALUE_MAX + 1, "\"}");
	ann_refused(f, big, NG_E_ANNOTATION, "longer than");

	/* 257 grants: over the per-pod limit. */
	char *many = malloc(257 * 16 + 64);
	size_t o = (size_t)sprintf(many, "{\"netguard.boxxkite.io/egress\":\"");
	for (int i = 0; i < 257; i++)
		o += (size_t)sprintf(many + o, "%s10.1.%d.%d:443", i ? "," : "", i / 250, i % 250);
	strcpy(many + o, "\"}");
	ann_refused(f, many, NG_E_ANNOTATION, "more than 256");
	free(many);
}

/* Issue 13 item 6: a key equal to ours but for case is refused (101), never
 * skipped as "not ours"; foreign keys that merely look alike still pass. */
static void test_key_case_refused(void **state)
{
	struct fixture *f = *state;
	struct ng_annotations a;
	struct ng_err err;

	ann_refused(f, "{\"Netguard.Boxxkite.io/enforce\":\"true\"}", NG_E_ANNOTATION, "only in case");
	ann_refused(f, "{\"NETGUARD.BOXXKITE.IO/EGRESS\":\"10.1.2.3:443\"}", NG_E_ANNOTATION, "only in case");
	ann_refused(f, "{\"app\":\"x\",\"netguard.boxxkite.IO/whatever\":\"1\"}", NG_E_ANNOTATION,
		    "only in case");
	assert_int_equal(ann(f, "{\"netguard.boxxkite.io.example/enforce\":\"true\"}", &a, &err), 0);
	assert_int_equal(a.enforce, -1);
	ng_annotations_free(&a);
}

static void test_unknown_and_enforce_values(void **state)
{
	struct fixture *f = *state;
	struct ng_annotations a;
	struct ng_err err;

	ann_refused(f, "{\"netguard.boxxkite.io/enforec\":\"true\"}", NG_E_ANNOTATION,
		    "unknown netguard key");
	ann_refused(f, "{\"netguard.boxxkite.io/Egress\":\"10.1.2.3:443\"}", NG_E_ANNOTATION, "unknown");
	ann_refused(f, "{\"netguard.boxxkite.io/enforce\":\"yes\"}", NG_E_ANNOTATION,
		    "\"true\" or \"false\"");
	ann_refused(f, "{\"netguard.boxxkite.io/enforce\":\"True\"}", NG_E_ANNOTATION,
		    "\"true\" or \"false\"");
	assert_int_equal(ann(f, "{\"netguard.boxxkite.io/enforce\":\"false\"}", &a, &err), 0);
	assert_int_equal(a.enforce, 0);
	ng_annotations_free(&a);

	/* runtimeConfig and the annotation map must have the right shapes. */
	json_t *root = json_deep_copy(f->conf);
	json_object_set_new(root, "runtimeConfig", tu_json("[]"));
	assert_int_not_equal(ng_annotations_parse(root, &f->cfg, &a, &err), 0);
	ng_annotations_free(&a);
	json_object_set_new(root, "runtimeConfig", tu_json("{\"io.kubernetes.cri.pod-annotations\":[1]}"));
	assert_int_not_equal(ng_annotations_parse(root, &f->cfg, &a, &err), 0);
	assert_int_equal(err.code, NG_E_ANNOTATION);
	ng_annotations_free(&a);
	json_decref(root);
}

static bool selected_mode(struct fixture *f, const char *ns, const char *annotations, int *code, char *reason,
			  bool *audit)
{
	struct ng_annotations a;
	struct ng_err err = {0};
	bool enforced = false;

	*code = ann(f, annotations, &a, &err);
	if (*code == 0 && ng_select(&f->cfg, ns, &a, &enforced, audit, reason, 512, &err) < 0)
		*code = err.code;
	ng_annotations_free(&a);
	return enforced;
}

static bool selected(struct fixture *f, const char *ns, const char *annotations, int *code, char *reason)
{
	bool audit = true;
	bool enforced = selected_mode(f, ns, annotations, code, reason, &audit);

	assert_false(audit);
	return enforced;
}

static void test_selection(void **state)
{
	struct fixture *f = *state;
	char reason[512];
	int code;

	assert_true(selected(f, "sandboxes", NULL, &code, reason));
	assert_contains(reason, "namespace sandboxes is in enforce.namespaces");
	/* Annotations cannot opt a pod of an enforced namespace out. */
	assert_true(selected(f, "sandboxes", "{\"netguard.boxxkite.io/enforce\":\"false\"}", &code, reason));
	assert_contains(reason, "opt-out annotation is ignored");
	/* Elsewhere: opt in by annotation. */
	assert_true(selected(f, "default", "{\"netguard.boxxkite.io/enforce\":\"true\"}", &code, reason));
	assert_contains(reason, "opted in");
	assert_false(selected(f, "default", "{}", &code, reason));
	assert_int_equal(code, 0);
	assert_contains(reason, "not in enforce.namespaces");
	assert_false(selected(f, "", NULL, &code, reason));
	assert_contains(reason, "no K8S_POD_NAMESPACE");
	assert_contains(reason, "passed no pod annotations");
	/* Namespace match is exact. */
	assert_false(selected(f, "sandboxes-2", "{}", &code, reason));

	/* A pod asking for enforcement where opt-in is off fails closed. */
	json_t *conf = tu_conf_with("enforce", "{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":false}");
	struct ng_config cfg2;
	struct ng_err err = {0};
	assert_int_equal(ng_config_parse(conf, &cfg2, &err), 0);
	struct ng_config saved = f->cfg;
	f->cfg = cfg2;
	assert_false(selected(f, "default", "{\"netguard.boxxkite.io/enforce\":\"true\"}", &code, reason));
	assert_int_equal(code, NG_E_OPT_IN);
	f->cfg = saved;
	ng_config_free(&cfg2);
	json_decref(conf);
}

/* enforce.auditNamespaces: enforced in audit mode, unless enforce.namespaces
 * or the pod's own opt-in asks for the real thing. */
static void test_audit_selection(void **state)
{
	struct fixture *f = *state;
	json_t *conf = tu_conf_with("enforce", "{\"namespaces\":[\"sandboxes\",\"both\"],"
					       "\"auditNamespaces\":[\"staging\",\"both\"],"
					       "\"optInAnnotation\":true}");
	struct ng_config cfg2, saved = f->cfg;
	struct ng_err err = {0};
	char reason[512];
	bool audit;
	int code;

	assert_int_equal(ng_config_parse(conf, &cfg2, &err), 0);
	f->cfg = cfg2;
	assert_true(selected_mode(f, "staging", "{}", &code, reason, &audit));
	assert_true(audit);
	assert_contains(reason, "enforce.auditNamespaces: AUDIT, not enforcing");
	assert_true(selected_mode(f, "both", "{}", &code, reason, &audit));
	assert_false(audit);
	assert_contains(reason, "is in enforce.namespaces");
	assert_true(selected_mode(f, "staging", "{\"netguard.boxxkite.io/enforce\":\"true\"}", &code, reason,
				  &audit));
	assert_false(audit);
	assert_contains(reason, "opted in");
	assert_false(selected_mode(f, "staging-2", "{}", &code, reason, &audit));
	assert_false(audit);
	f->cfg = saved;
	ng_config_free(&cfg2);
	json_decref(conf);

	/* The list is validated like enforce.namespaces, and counts as selecting. */
	conf = tu_conf_with("enforce", "{\"auditNamespaces\":[\"Bad_NS\"]}");
	assert_int_equal(ng_config_parse(conf, &cfg2, &err), -1);
	assert_contains(err.msg, "enforce.auditNamespaces[0]: not a Kubernetes namespace name");
	ng_config_free(&cfg2);
	json_decref(conf);
	conf = tu_conf_with("enforce", "{\"auditNamespaces\":[\"staging\"]}");
	memset(&err, 0, sizeof(err));
	assert_int_equal(ng_config_parse(conf, &cfg2, &err), 0);
	ng_config_free(&cfg2);
	json_decref(conf);
	conf = tu_conf_with("enforce", "{\"auditNamespaces\":\"staging\"}");
	assert_int_equal(ng_config_parse(conf, &cfg2, &err), -1);
	assert_contains(err.msg, "enforce.auditNamespaces: must be an array");
	ng_config_free(&cfg2);
	json_decref(conf);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_absent_and_foreign, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants_inside_envelope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grants_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_grant_syntax_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_and_enforce_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_case_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_audit_selection, setup, teardown),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("annotations", tests, NULL, NULL);
}
