/* The plugin entry: what parses, and every refusal of guide section 1. */
#include "spec/cniversion.h"
#include "testutil.h"

/* Asserts that replacing `key` by `value` is refused with `code`, and that
 * the message names the fault. */
static void refused(const char *key, const char *value, int code, const char *why)
{
	struct ng_err err;
	int got = tu_config_code(tu_conf_with(key, value), &err);

	if (got != code)
		fail_msg("%s=%s: want code %d, got %d (%s)", key, value ? value : "(removed)", code, got,
			 err.msg);
	assert_contains(err.msg, why);
}

/* log: on by default (NG_DEFAULT_LOG_GROUP); false turns it off; an
 * object may set any of its keys alone. */
static void test_log_defaults(void **state)
{
	(void)state;
	static const struct {
		const char *value;
		int group;
		unsigned rate, burst;
	} cases[] = {
		{NULL, NG_DEFAULT_LOG_GROUP, NG_DEFAULT_LOG_RATE, NG_DEFAULT_LOG_BURST},
		{"false", -1, NG_DEFAULT_LOG_RATE, NG_DEFAULT_LOG_BURST},
		{"{}", NG_DEFAULT_LOG_GROUP, NG_DEFAULT_LOG_RATE, NG_DEFAULT_LOG_BURST},
		{"{\"ratePerSecond\":5}", NG_DEFAULT_LOG_GROUP, 5, NG_DEFAULT_LOG_BURST},
		{"{\"nflogGroup\":42,\"burst\":3}", 42, NG_DEFAULT_LOG_RATE, 3},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *root = cases[i].value ? tu_conf_with("log", cases[i].value) : tu_json(BASE_CONF);
		struct ng_config cfg;
		struct ng_err err = {0};

		assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
		assert_int_equal(cfg.nflog_group, cases[i].group);
		assert_int_equal(cfg.log_rate, cases[i].rate);
		assert_int_equal(cfg.log_burst, cases[i].burst);
		ng_config_free(&cfg);
		json_decref(root);
	}
}

static void test_base_parses(void **state)
{
	(void)state;
	struct ng_config cfg;
	struct ng_err err = {0};
	json_t *root = tu_json(BASE_CONF);

	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_string_equal(cfg.cni_version, "1.0.0");
	assert_true(cfg.annotations_capability);
	assert_int_equal(cfg.namespaces.n, 1);
	assert_true(cfg.opt_in);
	assert_int_equal(cfg.dns.servers.n, 2);
	assert_int_equal(cfg.allow.n, 2);
	assert_int_equal(cfg.allow.v[1].kind, NG_HOST_NAME);
	assert_int_equal(cfg.envelope.n, 3);
	assert_int_equal(cfg.ingress_ports.n, 1);
	assert_true(cfg.allow_node);
	assert_int_equal(cfg.deny, NG_DENY_REJECT);
	assert_int_equal(cfg.min_prefix_v4, 8);
	assert_int_equal(cfg.min_prefix_v6, 32);
	assert_int_equal(cfg.min_name_ttl, NG_DEFAULT_MIN_NAME_TTL);
	assert_int_equal(cfg.nflog_group, NG_DEFAULT_LOG_GROUP); /* refusals logged unless told not to */
	assert_true(cfg.raw_guard);                          /* packet sockets held unless said otherwise */
	assert_int_equal(cfg.host_mirror, NG_HOST_REQUIRED); /* the host side, unless said otherwise */
	/* 14 built-in endpoints (8 IPv4) + the 4 single-address IPv6 forms of
	 * each IPv4 one (mapped, compatible, translated, NAT64). */
	assert_int_equal(cfg.metadata.n, 46);
	ng_config_free(&cfg);
	json_decref(root);
}

static void test_versions(void **state)
{
	(void)state;
	struct ng_err err;

	for (int i = 0; ng_supported_versions[i]; i++) {
		char v[32];

		snprintf(v, sizeof(v), "\"%s\"", ng_supported_versions[i]);
		assert_int_equal(tu_config_code(tu_conf_with("cniVersion", v), &err), 0);
	}
	refused("cniVersion", "\"0.2.0\"", NG_E_VERSION, "not supported");
	refused("cniVersion", "\"2.0.0\"", NG_E_VERSION, "not supported");
	refused("cniVersion", NULL, NG_E_CONFIG, "cniVersion: required");
	refused("cniVersion", "1", NG_E_CONFIG, "cniVersion");
	assert_true(ng_version_cmp("0.4.0", "1.0.0") < 0);
	assert_true(ng_version_cmp("1.1.0", "1.0.0") > 0);
	assert_int_equal(ng_version_cmp("0.3.1", "0.3.1"), 0);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	refused("egres", "{}", NG_E_CONFIG, "egres: unknown key");
	refused("enforce", "{\"namespaces\":[\"a\"],\"optIn\":true}", NG_E_CONFIG,
		"enforce.optIn: unknown key");
	refused("egress", "{\"allow\":[],\"alow\":[]}", NG_E_CONFIG, "egress.alow: unknown key");
	refused("ingress", "{\"port\":[80]}", NG_E_CONFIG, "ingress.port: unknown key");
	refused("dns", "{\"server\":[\"10.0.0.1\"]}", NG_E_CONFIG, "dns.server: unknown key");
	refused("metadata", "{\"extras\":[]}", NG_E_CONFIG, "metadata.extras: unknown key");
}

static void test_open_world_refusals(void **state)
{
	(void)state;
	refused("egress", "{\"allow\":[\"0.0.0.0/0:443\"]}", NG_E_CONFIG,
		"0.0.0.0/0 would match every address");
	refused("egress", "{\"allow\":[\"[::/0]:443\"]}", NG_E_CONFIG, "::/0 would match every address");
	refused("egress", "{\"envelope\":[\"0.0.0.0/0:443\"]}", NG_E_CONFIG, "egress.envelope[0]");
	refused("ingress", "{\"ports\":[8080],\"sources\":[\"0.0.0.0/0\"]}", NG_E_CONFIG,
		"ingress.sources[0]");
	refused("egress", "{\"allow\":[\"10.0.0.0/7:443\"]}", NG_E_CONFIG, "shorter than the minimum /8");
	refused("egress", "{\"allow\":[\"[fd00::/16]:443\"]}", NG_E_CONFIG, "shorter than the minimum /32");
	refused("egress", "{\"minPrefixV4\":16,\"allow\":[\"10.0.0.0/12:443\"]}", NG_E_CONFIG, "minimum /16");
	refused("egress", "{\"minPrefixV4\":0}", NG_E_CONFIG, "egress.minPrefixV4");
	refused("egress", "{\"minPrefixV6\":129}", NG_E_CONFIG, "egress.minPrefixV6");
	refused("egress", "{\"minNameTTL\":5}", NG_E_CONFIG, "egress.minNameTTL");
}

static void test_metadata_refusals(void **state)
{
	(void)state;
	refused("egress", "{\"allow\":[\"169.254.0.0/16:80\"]}", NG_E_CONFIG,
		"metadata address 169.254.169.254");
	refused("egress", "{\"allow\":[\"169.254.169.254:80\"]}", NG_E_CONFIG, "always refused");
	refused("egress", "{\"allow\":[\"168.63.0.0/16:443\"]}", NG_E_CONFIG, "168.63.129.16");
	refused("egress", "{\"allow\":[\"100.64.0.0/10:443\"]}", NG_E_CONFIG, "100.100.100.200");
	refused("egress", "{\"allow\":[\"[fd00:ec2::/64]:80\"]}", NG_E_CONFIG, "fd00:ec2::254");
	refused("egress", "{\"allow\":[\"[64:ff9b::/96]:80\"]}", NG_E_CONFIG, "64:ff9b::");
	refused("dns", "{\"servers\":[\"168.63.129.16\"]}", NG_E_CONFIG, "dns.servers[0]");
	/* Extra metadata addresses join the list and are refused the same way. */
	refused("metadata", "{\"extra\":[\"10.20.0.5\"]}", NG_E_CONFIG, "10.20.0.5");
	refused("metadata", "{\"extra\":[\"10.0.0.0/8\"]}", NG_E_CONFIG, "single addresses only");
	/* Node-local DNS lives in 169.254.0.0/16 and stays allowed. */
	struct ng_err err;
	assert_int_equal(tu_config_code(tu_conf_with("dns", "{\"servers\":[\"169.254.20.10\"]}"), &err), 0);
}

/* An extra IPv4 metadata address is refused in its IPv6 forms too, like
 * the built-in ones. */
static void test_metadata_extra_forms(void **state)
{
	(void)state;
	static const char *const want[] = {"192.0.2.80",          "::ffff:192.0.2.80", "::192.0.2.80",
					   "::ffff:0:192.0.2.80", "64:ff9b::c000:250", NULL};
	struct ng_config cfg;
	struct ng_err err = {0};
	json_t *root = tu_conf_with("metadata", "{\"extra\":[\"192.0.2.80\"]}");

	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(cfg.metadata.n, 51);
	for (int i = 0; want[i]; i++) {
		struct ng_ip ip;
		bool found = false;

		assert_int_equal(ng_ip_parse(want[i], &ip), 0);
		for (size_t j = 0; j < cfg.metadata.n; j++)
			found |= ng_ip_eq(&cfg.metadata.v[j], &ip);
		if (!found)
			fail_msg("%s missing from the metadata list", want[i]);
	}
	ng_config_free(&cfg);
	json_decref(root);
}

static void test_placeholders(void **state)
{
	(void)state;
	refused("egress", "{\"allow\":[\"CHANGEME:443\"]}", NG_E_CONFIG,
		"egress.allow[0]: holds the placeholder CHANGEME");
	refused("logFile", "\"/var/log/CHANGEME.log\"", NG_E_CONFIG, "logFile: holds the placeholder");
	refused("ingress", "{\"ports\":[8080],\"sources\":[\"10.0.0.0/8\"],\"CHANGEME\":1}", NG_E_CONFIG,
		"CHANGEME");
	/* The runtime's keys are not the platform's and are not scanned. */
	struct ng_err err;
	assert_int_equal(tu_config_code(tu_conf_with("args", "{\"note\":\"CHANGEME\"}"), &err), 0);
}

static void test_selection_config(void **state)
{
	(void)state;
	refused("enforce", NULL, NG_E_CONFIG, "enforce: required");
	refused("enforce", "{\"namespaces\":[],\"optInAnnotation\":false}", NG_E_CONFIG, "selects no pod");
	refused("enforce", "{\"namespaces\":[\"Bad_NS\"]}", NG_E_CONFIG, "enforce.namespaces[0]");
	refused("enforce", "{\"namespaces\":\"sandboxes\"}", NG_E_CONFIG, "must be an array");
	refused("enforce", "{\"namespaces\":[\"a\"],\"optInAnnotation\":\"yes\"}", NG_E_CONFIG,
		"true or false");
	refused("capabilities", "{}", NG_E_CONFIG, "enforce.optInAnnotation: needs");
}

static void test_malformed_values(void **state)
{
	(void)state;
	refused("rawPacketGuard", "\"false\"", NG_E_CONFIG, "rawPacketGuard: must be true or false");
	refused("rawPacketGuard", "0", NG_E_CONFIG, "rawPacketGuard: must be true or false");
	refused("hostMirror", "\"on\"", NG_E_CONFIG, "hostMirror: must be \"required\", \"auto\" or \"off\"");
	refused("hostMirror", "true", NG_E_CONFIG, "hostMirror: must be");
	refused("hostMirror", "\"Required\"", NG_E_CONFIG, "hostMirror: must be");
	{
		static const char *const ok[] = {"\"required\"", "\"auto\"", "\"off\""};
		struct ng_err e;

		for (int i = 0; i < 3; i++)
			assert_int_equal(tu_config_code(tu_conf_with("hostMirror", ok[i]), &e), 0);
	}
	refused("dns", "{\"servers\":[\"10.0.0\"]}", NG_E_CONFIG, "dns.servers[0]: not an IP address");
	refused("dns", "{\"servers\":\"10.0.0.1\"}", NG_E_CONFIG, "must be an array");
	refused("egress", "{\"allow\":[443]}", NG_E_CONFIG, "egress.allow[0]: must be a string");
	refused("egress", "{\"allow\":[\"10.0.0.1\"]}", NG_E_CONFIG,
		"egress.allow[0]: destination \"10.0.0.1\": port is required");
	refused("egress", "{\"names\":\"resolve\",\"allow\":[\"*.example.com:443\"]}", NG_E_CONFIG,
		"only allowed in egress.envelope");
	refused("egress", "{\"names\":\"learned\"}", NG_E_CONFIG, "egress.names: must be");
	refused("stateDir", "\"run/x\"", NG_E_CONFIG, "stateDir: must be an absolute path");
	refused("stateDir", "\"/run/../etc\"", NG_E_CONFIG, "stateDir: must be an absolute path");
	refused("ingress", "{\"ports\":[0],\"sources\":[\"10.0.0.0/8\"]}", NG_E_CONFIG, "ingress.ports[0]");
	refused("ingress", "{\"ports\":[65536],\"sources\":[\"10.0.0.0/8\"]}", NG_E_CONFIG,
		"ingress.ports[0]");
	refused("ingress", "{\"ports\":[\"8080\"],\"sources\":[\"10.0.0.0/8\"]}", NG_E_CONFIG,
		"ingress.ports[0]");
	refused("ingress", "{\"ports\":[8080]}", NG_E_CONFIG, "ingress.sources: required");
	refused("ingress", "{\"sources\":[\"10.0.0.0/8\"]}", NG_E_CONFIG, "ingress.ports: required");
	refused("ingress", "{\"ports\":[8080],\"sources\":[\"10.1.2.3/8\"]}", NG_E_CONFIG, "host bits");
	refused("ingress", "{\"ports\":[8080],\"sources\":[\"10.0.0.0/8\"],\"allowNode\":1}", NG_E_CONFIG,
		"true or false");
	refused("denyAction", "\"block\"", NG_E_CONFIG, "denyAction");
	refused("log", "true", NG_E_CONFIG, "log: must be an object");
	refused("log", "\"off\"", NG_E_CONFIG, "or false (no logging)");
	refused("log", "{\"nflogGroup\":65536}", NG_E_CONFIG, "log.nflogGroup");
	refused("log", "{\"nflogGroup\":65053}", NG_E_CONFIG, "the node agent's own group");
	refused("log", "{\"nflogGroup\":5,\"ratePerSecond\":0}", NG_E_CONFIG, "log.ratePerSecond");
	refused("log", "{\"nflogGroup\":5,\"burst\":\"10\"}", NG_E_CONFIG, "log.burst");
	refused("log", "{\"nflogGroup\":5,\"rate\":10}", NG_E_CONFIG, "log.rate: unknown key");
	refused("logFile", "\"relative.log\"", NG_E_CONFIG, "absolute path");
	refused("name", "42", NG_E_CONFIG, "name: must be a string");
	refused("capabilities", "{\"io.kubernetes.cri.pod-annotations\":\"yes\"}", NG_E_CONFIG,
		"capabilities.");

	struct ng_err err;
	assert_int_equal(tu_config_code(tu_conf_with("log", "{\"nflogGroup\":0}"), &err), 0);
	assert_int_equal(tu_config_code(tu_json("[1,2]"), &err), NG_E_DECODE);
	assert_int_equal(tu_config_code(tu_conf_with("denyAction", "\"drop\""), &err), 0);
}

/* dns.queries, dns.alwaysAllowed, dns.refusedAnswer (README "DNS
 * queries"): defaults by mode, and each refusal. */
static void test_dns_queries(void **state)
{
	struct ng_config cfg;
	struct ng_err err = {0};
	json_t *root;

	(void)state;
	/* resolve mode (BASE_CONF): every query leaves, as before. */
	root = tu_json(BASE_CONF);
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_false(cfg.dns.queries_listed);
	assert_int_equal(cfg.dns.refused_rcode, 3);
	ng_config_free(&cfg);
	json_decref(root);
	/* learn mode: "listed" unless said otherwise. */
	root = tu_conf_with("egress", "{\"names\":\"learn\",\"allow\":[\"s3.example.com:443\"]}");
	json_object_set_new(
		root, "dns",
		tu_json("{\"servers\":[\"10.96.0.10\"],\"alwaysAllowed\":[\"*.svc.cluster.local\","
			"\"Metadata.Google.Internal.\"],\"refusedAnswer\":\"refused\"}"));
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_true(cfg.dns.queries_listed);
	assert_int_equal(cfg.dns.refused_rcode, 5);
	assert_int_equal(cfg.dns.always.n, 2);
	assert_int_equal(cfg.dns.always.v[0].kind, NG_HOST_WILDCARD);
	assert_string_equal(cfg.dns.always.v[0].name, "svc.cluster.local");
	assert_string_equal(cfg.dns.always.v[1].name, "metadata.google.internal");
	ng_config_free(&cfg);
	json_object_set_new(json_object_get(root, "dns"), "queries", json_string("any"));
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_false(cfg.dns.queries_listed);
	ng_config_free(&cfg);
	json_decref(root);

	refused("dns", "{\"queries\":\"listed\"}", NG_E_CONFIG, "needs egress.names \"learn\"");
	refused("dns", "{\"queries\":\"some\"}", NG_E_CONFIG, "dns.queries");
	refused("dns", "{\"refusedAnswer\":\"servfail\"}", NG_E_CONFIG, "dns.refusedAnswer");
	refused("dns", "{\"alwaysAllowed\":[\"*.svc.cluster.local\"]}", NG_E_CONFIG, "only used with");
	root = tu_conf_with("egress", "{\"names\":\"learn\"}");
	static const char *const bad[] = {"\"*.\"",         "\"*.com\"",
					  "\"com\"",        "\"*\"",
					  "\"a.*.b.test\"", "\"s3.example.com:443\"",
					  "\"bad..name\"",  "7",
					  "\"-a.test\""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "{\"alwaysAllowed\":[%s]}", bad[i]);
		json_object_set_new(root, "dns", tu_json(text));
		if (ng_config_parse(root, &cfg, &err) != -1 || err.code != NG_E_CONFIG)
			fail_msg("dns.alwaysAllowed %s accepted", bad[i]);
		assert_contains(err.msg, "dns.alwaysAllowed[0]");
		ng_config_free(&cfg);
	}
	json_decref(root);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_parses),
		cmocka_unit_test(test_log_defaults),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_open_world_refusals),
		cmocka_unit_test(test_metadata_refusals),
		cmocka_unit_test(test_metadata_extra_forms),
		cmocka_unit_test(test_placeholders),
		cmocka_unit_test(test_selection_config),
		cmocka_unit_test(test_malformed_values),
		cmocka_unit_test(test_dns_queries),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
