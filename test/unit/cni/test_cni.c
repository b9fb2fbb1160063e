/* The CNI protocol through ng_cni_main: environment, stdin, verbs, result
 * and error JSON, the decision log. Only paths that need no kernel and no
 * root run here (the netns e2e tests cover the rest). */
#include "testutil.h"

#include <unistd.h>

#include "cni/cni.h"

/* No DNS names in this config, so no test resolves anything. */
#define CONF_NO_NAMES                                                                       \
	"{\"cniVersion\":\"1.0.0\",\"name\":\"k8s\",\"type\":\"boxxkite-netguard\","        \
	"\"capabilities\":{\"io.kubernetes.cri.pod-annotations\":true},\"logFile\":\"%s\"," \
	"\"enforce\":{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":true},"            \
	"\"egress\":{\"allow\":[\"10.20.0.0/16:443\"],\"envelope\":[\"10.0.0.0/8:443\"]}%s}"
#define PREV                                                                           \
	",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.88.0.5/" \
	"16\",\"gateway\":\"10.88.0.1\"}]}"

static char logpath[256];

struct run {
	int status;
	char *out;
	json_t *json; /* stdout parsed, when it is JSON */
};

static struct run run_cni(const char *verb, const char *stdin_text, size_t len)
{
	struct run r = {0};
	size_t out_len = 0;
	FILE *in, *out;

	setenv("CNI_COMMAND", verb, 1);
	in = fmemopen((void *)stdin_text, len ? len : strlen(stdin_text), "r");
	if (!len && !*stdin_text) { /* fmemopen cannot open a zero-length buffer */
		fclose(in);
		in = fopen("/dev/null", "r");
	}
	out = open_memstream(&r.out, &out_len);
	r.status = ng_cni_main(in, out);
	fclose(in);
	fclose(out);
	r.json = json_loads(r.out, JSON_DISABLE_EOF_CHECK, NULL);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	json_decref(r->json);
}

static char *conf(const char *extra)
{
	static char buf[8192];

	snprintf(buf, sizeof(buf), CONF_NO_NAMES, logpath, extra);
	return buf;
}

static void env_pod(const char *netns, const char *ns)
{
	char args[256];

	setenv("CNI_CONTAINERID", "0123456789abcdef0123", 1);
	setenv("CNI_IFNAME", "eth0", 1);
	if (netns)
		setenv("CNI_NETNS", netns, 1);
	else
		unsetenv("CNI_NETNS");
	snprintf(args, sizeof(args), "IgnoreUnknown=1;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=p1", ns);
	setenv("CNI_ARGS", args, 1);
}

/* The last decision line in the log. */
static json_t *last_log(void)
{
	char line[8192], last[8192] = "";
	FILE *f = fopen(logpath, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		memcpy(last, line, sizeof(last));
	fclose(f);
	return tu_json(last);
}

static void expect_error(struct run *r, int code, const char *why)
{
	assert_int_not_equal(r->status, 0);
	if (!r->json)
		fail_msg("stdout is not the error JSON: %s", r->out);
	assert_int_equal(json_integer_value(json_object_get(r->json, "code")), code);
	assert_contains(json_string_value(json_object_get(r->json, "msg")), why);
	assert_non_null(json_object_get(r->json, "cniVersion"));
}

static int setup(void **state)
{
	(void)state;
	snprintf(logpath, sizeof(logpath), "/tmp/ng-test-cni-%d.log", (int)getpid());
	unlink(logpath);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(logpath);
	return 0;
}

static void test_version(void **state)
{
	(void)state;
	struct run r = run_cni("VERSION", "{\"cniVersion\":\"0.4.0\"}", 0);

	assert_int_equal(r.status, 0);
	assert_string_equal(json_string_value(json_object_get(r.json, "cniVersion")), "0.4.0");
	assert_int_equal(json_array_size(json_object_get(r.json, "supportedVersions")), 5);
	run_free(&r);
	r = run_cni("VERSION", "", 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_string_value(json_object_get(r.json, "cniVersion")), "1.1.0");
	run_free(&r);
}

static void test_bad_verb_and_env(void **state)
{
	(void)state;
	struct run r = run_cni("FROB", "{}", 0);

	expect_error(&r, NG_E_ENV, "not a CNI verb");
	run_free(&r);
	env_pod("/var/run/netns/x", "sandboxes");
	unsetenv("CNI_CONTAINERID");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_ENV, "CNI_CONTAINERID is required");
	run_free(&r);
	env_pod(NULL, "sandboxes");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_ENV, "CNI_NETNS is required");
	run_free(&r);
	/* The guard chain is bound to CNI_IFNAME by name: the kernel's rules. */
	static const char *const bad_ifnames[] = {"0123456789abcdef", "..", "eth/0", "eth 0", "a:b", NULL};
	for (int i = 0; bad_ifnames[i]; i++) {
		env_pod("/var/run/netns/x", "sandboxes");
		setenv("CNI_IFNAME", bad_ifnames[i], 1);
		r = run_cni("ADD", conf(PREV), 0);
		expect_error(&r, NG_E_ENV, "is not a valid interface name");
		run_free(&r);
	}
	env_pod("/var/run/netns/x", "sandboxes");
	setenv("CNI_ARGS", "K8S_POD_NAMESPACE", 1);
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_ENV, "CNI_ARGS");
	run_free(&r);
}

static void test_decode_errors(void **state)
{
	(void)state;
	struct run r;
	char *big;

	env_pod("/var/run/netns/x", "sandboxes");
	r = run_cni("ADD", "{\"cniVersion\":", 0);
	expect_error(&r, NG_E_DECODE, "not valid JSON");
	run_free(&r);
	r = run_cni("ADD", "{\"cniVersion\":\"1.0.0\",\"cniVersion\":\"0.3.1\"}", 0);
	expect_error(&r, NG_E_DECODE, "duplicate");
	run_free(&r);
	r = run_cni("ADD", "[1]", 0);
	expect_error(&r, NG_E_DECODE, "must be a JSON object");
	run_free(&r);
	r = run_cni("ADD", "{\"name\":\"\xff\xfe\"}", 0);
	expect_error(&r, NG_E_DECODE, "not valid JSON");
	run_free(&r);

	big = malloc(NG_STDIN_MAX + 16);
	memset(big, ' ', NG_STDIN_MAX + 15);
	big[0] = '{';
	big[NG_STDIN_MAX + 14] = '}';
	r = run_cni("ADD", big, NG_STDIN_MAX + 15);
	expect_error(&r, NG_E_DECODE, "larger than");
	run_free(&r);
	free(big);

	/* Deep nesting is refused by the parser, not by a crash. */
	big = malloc(200000);
	memset(big, '[', 100000);
	memset(big + 100000, ']', 99999);
	big[199999] = '\0';
	r = run_cni("ADD", big, 0);
	expect_error(&r, NG_E_DECODE, "not valid JSON");
	run_free(&r);
	free(big);
}

static void test_config_errors(void **state)
{
	(void)state;
	struct run r;

	env_pod("/var/run/netns/x", "sandboxes");
	r = run_cni("ADD", conf(""), 0);
	expect_error(&r, NG_E_CONFIG, "prevResult is required");
	run_free(&r);
	r = run_cni("ADD", conf(",\"egres\":{}" PREV), 0);
	expect_error(&r, NG_E_CONFIG, "egres: unknown key");
	run_free(&r);
	r = run_cni("ADD", conf(",\"prevResult\":{\"ips\":[{\"address\":\"bad\"}]}"), 0);
	expect_error(&r, NG_E_CONFIG, "prevResult.ips[0].address");
	run_free(&r);
	r = run_cni("ADD",
		    conf(",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			 "{\"netguard.boxxkite.io/egress\":\"11.0.0.1:443\"}}" PREV),
		    0);
	expect_error(&r, NG_E_ENVELOPE, "11.0.0.1:443");
	run_free(&r);
	r = run_cni("ADD",
		    conf(",\"runtimeConfig\":{\"io.kubernetes.cri.pod-annotations\":"
			 "{\"netguard.boxxkite.io/egres\":\"10.0.0.1:443\"}}" PREV),
		    0);
	expect_error(&r, NG_E_ANNOTATION, "unknown netguard key");
	run_free(&r);

	/* Every refusal is logged, with its code. */
	json_t *line = last_log();
	assert_string_equal(json_string_value(json_object_get(line, "decision")), "refused");
	assert_int_equal(json_integer_value(json_object_get(line, "code")), NG_E_ANNOTATION);
	assert_string_equal(json_string_value(json_object_get(line, "verb")), "ADD");
	json_decref(line);
}

static void test_skipped_pod_passes_through(void **state)
{
	(void)state;
	struct run r;
	json_t *line;

	env_pod("/nonexistent/netns", "default"); /* never touched for a skipped pod */
	r = run_cni("ADD", conf(PREV), 0);
	assert_int_equal(r.status, 0);
	/* The prevResult comes back as it was, in the config's version. */
	assert_string_equal(json_string_value(json_object_get(r.json, "cniVersion")), "1.0.0");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r.json, "ips"), 0), "address")),
			    "10.88.0.5/16");
	run_free(&r);
	line = last_log();
	assert_string_equal(json_string_value(json_object_get(line, "decision")), "skipped");
	assert_contains(json_string_value(json_object_get(line, "reason")), "not in enforce.namespaces");
	assert_string_equal(json_string_value(json_object_get(line, "pod_namespace")), "default");
	assert_string_equal(json_string_value(json_object_get(line, "pod_name")), "p1");
	assert_string_equal(json_string_value(json_object_get(line, "container_id")), "0123456789abcdef0123");
	assert_true(json_is_integer(json_object_get(line, "duration_us")));
	json_decref(line);

	/* Converted down for a 0.3.1 conflist (kindnet). */
	char c031[8192];
	snprintf(c031, sizeof(c031), "%s", conf(PREV));
	memcpy(strstr(c031, "1.0.0"), "0.3.1", 5);
	r = run_cni("ADD", c031, 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_string_value(json_object_get(r.json, "cniVersion")), "0.3.1");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r.json, "ips"), 0), "version")),
			    "4");
	run_free(&r);
}

static void test_enforced_pod_bad_netns(void **state)
{
	(void)state;
	struct run r;
	char file[256];
	FILE *f;

	/* The node's own namespace is never firewalled. */
	env_pod("/proc/self/ns/net", "sandboxes");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_ENV, "node's own network namespace");
	run_free(&r);
	/* A regular file or a directory is not a namespace. */
	snprintf(file, sizeof(file), "/tmp/ng-test-notns-%d", (int)getpid());
	f = fopen(file, "w");
	fclose(f);
	env_pod(file, "sandboxes");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_NETNS, "is not a network namespace");
	run_free(&r);
	env_pod("/tmp", "sandboxes");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_NETNS, "is not a network namespace");
	run_free(&r);
	/* An IPC namespace is a namespace, but the wrong kind. */
	env_pod("/proc/self/ns/ipc", "sandboxes");
	r = run_cni("ADD", conf(PREV), 0);
	expect_error(&r, NG_E_NETNS, "not a network namespace");
	run_free(&r);

	/* DEL succeeds whenever there is nothing to remove. */
	env_pod(file, "sandboxes");
	r = run_cni("DEL", conf(PREV), 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	run_free(&r);
	unlink(file);
	env_pod("/nonexistent/netns", "sandboxes");
	r = run_cni("DEL", conf(""), 0);
	assert_int_equal(r.status, 0);
	run_free(&r);
	setenv("CNI_NETNS", "", 1);
	r = run_cni("DEL", "this is not json", 0); /* second DEL of RemovePodSandbox */
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	run_free(&r);
	env_pod("/proc/self/ns/net", "sandboxes");
	r = run_cni("DEL", conf(PREV), 0);
	assert_int_equal(r.status, 0);
	run_free(&r);
}

static void test_check_status_gc(void **state)
{
	(void)state;
	struct run r;
	char c031[8192];

	env_pod("/var/run/netns/x", "sandboxes");
	snprintf(c031, sizeof(c031), "%s", conf(PREV));
	memcpy(strstr(c031, "1.0.0"), "0.3.1", 5);
	r = run_cni("CHECK", c031, 0);
	expect_error(&r, NG_E_VERSION, "CHECK needs cniVersion 0.4.0");
	run_free(&r);
	r = run_cni("CHECK", conf(""), 0);
	expect_error(&r, NG_E_CONFIG, "prevResult is required");
	run_free(&r);

	r = run_cni("STATUS", conf(""), 0);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	run_free(&r);
	r = run_cni("STATUS", conf(",\"denyAction\":\"maybe\""), 0);
	expect_error(&r, NG_E_CONFIG, "denyAction");
	run_free(&r);
	r = run_cni("GC", conf(",\"cni.dev/valid-attachments\":[]"), 0);
	assert_int_equal(r.status, 0);
	run_free(&r);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_bad_verb_and_env),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_skipped_pod_passes_through),
		cmocka_unit_test(test_enforced_pod_bad_netns),
		cmocka_unit_test(test_check_status_gc),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("cni", tests, setup, teardown);
}
