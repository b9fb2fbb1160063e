/* CNI_ARGS: parsed as KEY=VALUE pairs in any order, never compared whole. */
#include "testutil.h"

#include "spec/cni_args.h"

static void test_any_order(void **state)
{
	(void)state;
	struct ng_cni_args a;
	struct ng_err err = {0};

	assert_int_equal(ng_cni_args_parse("K8S_POD_NAME=p-1;IgnoreUnknown=1;K8S_POD_INFRA_CONTAINER_ID=abc;"
					   "K8S_POD_UID=u-1;K8S_POD_NAMESPACE=sandboxes",
					   &a, &err),
			 0);
	assert_string_equal(a.pod_namespace, "sandboxes");
	assert_string_equal(a.pod_name, "p-1");
	assert_string_equal(a.pod_uid, "u-1");
	assert_string_equal(a.infra_container_id, "abc");
	assert_true(a.ignore_unknown);

	assert_int_equal(ng_cni_args_parse("IgnoreUnknown=true;K8S_POD_NAMESPACE=a;", &a, &err), 0);
	assert_string_equal(a.pod_namespace, "a");
	assert_int_equal(ng_cni_args_parse("", &a, &err), 0);
	assert_string_equal(a.pod_namespace, "");
	assert_int_equal(ng_cni_args_parse(NULL, &a, &err), 0);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	struct ng_cni_args a;
	struct ng_err err = {0};

	/* Unknown keys fail unless IgnoreUnknown is set, wherever it appears. */
	assert_int_equal(ng_cni_args_parse("FOO=bar;K8S_POD_NAMESPACE=a", &a, &err), -1);
	assert_int_equal(err.code, NG_E_ENV);
	assert_contains(err.msg, "FOO");
	assert_int_equal(ng_cni_args_parse("FOO=bar;IgnoreUnknown=1", &a, &err), 0);
	assert_int_equal(ng_cni_args_parse("FOO=bar;IgnoreUnknown=0", &a, &err), -1);
}

static void test_malformed(void **state)
{
	(void)state;
	struct ng_cni_args a;
	struct ng_err err = {0};
	char big[9000];

	assert_int_equal(ng_cni_args_parse("K8S_POD_NAMESPACE", &a, &err), -1);
	assert_contains(err.msg, "invalid pair");
	assert_int_equal(ng_cni_args_parse("=x", &a, &err), -1);
	assert_int_equal(ng_cni_args_parse("K8S_POD_NAME=a=b", &a, &err), -1);
	assert_int_equal(ng_cni_args_parse("IgnoreUnknown=maybe", &a, &err), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "K8S_POD_NAME=", 13);
	assert_int_equal(ng_cni_args_parse(big, &a, &err), -1);
	assert_int_equal(err.code, NG_E_ENV);
	assert_int_equal(
		ng_cni_args_parse("K8S_POD_NAMESPACE="
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				  &a, &err),
		-1);
	assert_contains(err.msg, "K8S_POD_NAMESPACE is longer");
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_any_order),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_malformed),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("cni_args", tests, NULL, NULL);
}
