/* Narrower, never wider (live policy: a new entry under running pods):
 * a pod's grants checked one by one against the new entry exactly as ADD
 * checks them (policy/annotations.h), and a running pod never selected
 * less than it runs (policy/select.h). */
#include "testutil.h"

#include <stdlib.h>

#include "policy/annotations.h"
#include "policy/select.h"

static void narrow(const char *conf_egress, const char *value, const char *want_kept, size_t want_dropped)
{
	struct ng_err err = {0};
	struct ng_config cfg;
	ng_str_vec dropped = {0};
	char *kept = NULL;
	json_t *root = tu_conf_with("egress", conf_egress);

	if (ng_config_parse(root, &cfg, &err) < 0)
		fail_msg("%s: %s", conf_egress, err.msg);
	assert_int_equal(ng_annotations_narrow(value, &cfg, &kept, &dropped), 0);
	if (want_kept)
		assert_string_equal(kept, want_kept);
	else
		assert_null(kept);
	assert_int_equal(dropped.n, want_dropped);
	for (size_t i = 0; i < dropped.n; i++)
		free(dropped.v[i]);
	ng_vec_free(&dropped);
	free(kept);
	ng_config_free(&cfg);
	json_decref(root);
}

static void test_grants(void **state)
{
	const char *env = "{\"names\":\"learn\",\"envelope\":[\"10.0.0.0/8:443\",\"*.example.com:443\"]}";
	struct ng_err err = {0};
	struct ng_config cfg;
	ng_str_vec dropped = {0};
	char *kept = NULL;
	json_t *root;

	(void)state;
	/* all still inside: kept as written (spaces trimmed) */
	narrow(env, "10.1.2.3:443, api.example.com:443", "10.1.2.3:443,api.example.com:443", 0);
	/* one outside the envelope, one on another port */
	narrow(env, "10.1.2.3:443,192.168.1.1:443,10.1.2.3:8443", "10.1.2.3:443", 2);
	/* a wildcard where names are no longer learned */
	narrow("{\"names\":\"resolve\",\"envelope\":[\"*.example.com:443\"]}", "*.a.example.com:443", NULL,
	       1);
	/* no envelope: nothing is kept */
	narrow("{}", "10.1.2.3:443", NULL, 1);
	/* a narrower envelope: what lies outside it goes */
	narrow("{\"envelope\":[\"10.1.0.0/16:443\"],\"minPrefixV4\":16}", "10.1.2.0/24:443,10.2.0.0/24:443",
	       "10.1.2.0/24:443", 1);
	/* a metadata address, even inside an envelope */
	narrow("{\"envelope\":[\"0.0.0.0/1:80\",\"128.0.0.0/1:80\"],\"minPrefixV4\":1}", "169.254.169.254:80",
	       NULL, 1);
	/* malformed or empty entries are dropped too, never passed on */
	narrow(env, "10.1.2.3:443,,nonsense", "10.1.2.3:443", 2);
	/* the reasons are ADD's */
	root = tu_conf_with("egress", env);
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(ng_annotations_narrow("10.1.2.3:8443", &cfg, &kept, &dropped), 0);
	assert_int_equal(dropped.n, 1);
	assert_contains(dropped.v[0], "10.1.2.3:8443 (");
	assert_contains(dropped.v[0], "outside egress.envelope");
	free(dropped.v[0]);
	ng_vec_free(&dropped);
	ng_config_free(&cfg);
	json_decref(root);
}

/* A pod of namespace `ns` (opting in when `optin`) under `enforce`, kept at `keep`. */
static void kept(const char *enforce, const char *ns, bool optin, enum ng_keep keep, bool want_enforced,
		 bool want_audit, const char *reason)
{
	struct ng_err err = {0};
	struct ng_config cfg;
	struct ng_annotations ann = {.enforce = optin ? 1 : -1};
	bool enforced, audit;
	char why[512];
	json_t *root = tu_conf_with("enforce", enforce);

	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(ng_select_kept(&cfg, ns, &ann, keep, &enforced, &audit, why, sizeof(why), &err), 0);
	assert_int_equal(enforced, want_enforced);
	assert_int_equal(audit, want_audit);
	assert_contains(why, reason);
	ng_config_free(&cfg);
	json_decref(root);
}

static void test_kept(void **state)
{
	const char *both = "{\"namespaces\":[\"a\"],\"auditNamespaces\":[\"b\"]}";
	struct ng_err err = {0};
	struct ng_config cfg;
	struct ng_annotations ann = {.enforce = 1};
	bool enforced, audit;
	char why[512];
	json_t *root;

	(void)state;
	/* what the entry gives, when it is at least the floor */
	kept(both, "a", false, NG_KEEP_ENFORCE, true, false, "enforce.namespaces");
	kept(both, "a", false, NG_KEEP_AUDIT, true, false, "enforce.namespaces");
	kept(both, "b", false, NG_KEEP_AUDIT, true, true, "AUDIT");
	kept(both, "c", false, NG_KEEP_NONE, false, false, "not in enforce.namespaces");
	/* less than the floor: kept, and said */
	kept(both, "b", false, NG_KEEP_ENFORCE, true, false, "kept enforced until its DEL");
	kept(both, "c", false, NG_KEEP_ENFORCE, true, false, "would not select it");
	kept(both, "c", false, NG_KEEP_AUDIT, true, true, "kept in AUDIT");
	/* an opt-in the entry no longer allows: ADD refuses it, a running pod
	 * is kept */
	kept("{\"namespaces\":[\"a\"],\"optInAnnotation\":false}", "c", true, NG_KEEP_ENFORCE, true, false,
	     "optInAnnotation");
	root = tu_conf_with("enforce", "{\"namespaces\":[\"a\"],\"optInAnnotation\":false}");
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(
		ng_select_kept(&cfg, "c", &ann, NG_KEEP_NONE, &enforced, &audit, why, sizeof(why), &err), -1);
	assert_int_equal(err.code, NG_E_OPT_IN);
	ng_config_free(&cfg);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
