/* policy/metadata.c: the built-in list and its sources' additions, every
 * IPv6 form that can carry an IPv4 metadata address (issue 13 item 3), and
 * their refusal in egress.allow, grants and dns.servers. */
#include "testutil.h"

#include "policy/annotations.h"
#include "policy/metadata.h"

static void refused(const char *key, const char *value, const char *why)
{
	struct ng_err err;
	int got = tu_config_code(tu_conf_with(key, value), &err);

	if (got != NG_E_CONFIG)
		fail_msg("%s=%s: want code 7, got %d (%s)", key, value, got, err.msg);
	assert_contains(err.msg, why);
}

static void accepted(const char *key, const char *value)
{
	struct ng_err err;
	int got = tu_config_code(tu_conf_with(key, value), &err);

	if (got != 0)
		fail_msg("%s=%s: refused (%d: %s)", key, value, got, err.msg);
}

static void allow_refused(const char *entry, const char *why)
{
	char v[256];

	snprintf(v, sizeof(v), "{\"allow\":[\"%s\"]}", entry);
	refused("egress", v, why);
}

/* Each form's embedding, byte for byte (RFC 6052 2.2 skips the u octet). */
static void test_form_embedding(void **state)
{
	(void)state;
	static const char *const want[NG_V6_FORMS] = {
		"64:ff9b:1:a9fe:a9:fe00::", "64:ff9b:1:a9:fe:a9fe::", "64:ff9b:1:0:a9:fea9:fe00:0",
		"64:ff9b:1::a9fe:a9fe",     "2002:a9fe:a9fe::",       "2001::5601:5601",
		"::5efe:a9fe:a9fe",
	};
	struct ng_ip v4, got, w;
	char buf[NG_IP_STRLEN];

	assert_int_equal(ng_ip_parse("169.254.169.254", &v4), 0);
	for (int f = 0; f < NG_V6_FORMS; f++) {
		ng_v6_form_embed(&ng_v6_forms[f], &v4, &got);
		assert_int_equal(ng_ip_parse(want[f], &w), 0);
		ng_ip_format(&got, buf, sizeof(buf));
		if (!ng_ip_eq(&got, &w))
			fail_msg("%s: got %s, want %s", ng_v6_forms[f].name, buf, want[f]);
	}
}

/* The providers' own documents name these; each is refused. */
static void test_provider_list(void **state)
{
	(void)state;
	static const char *const added[] = {"169.254.170.2", "169.254.169.252", "192.0.0.192",
					    "[fd00:a9fe:a9fe::1]", NULL};

	for (int i = 0; added[i]; i++) {
		char e[64];

		snprintf(e, sizeof(e), "%s:80", added[i]);
		allow_refused(e, "cloud metadata address");
	}
	/* EKS Pod Identity and node-local DNS stay reachable. */
	accepted("egress", "{\"allow\":[\"169.254.170.23:80\"]}");
	accepted("dns", "{\"servers\":[\"169.254.20.10\"]}");
}

static void test_forms_refused_in_allow(void **state)
{
	(void)state;
	/* NAT64 local-use at every RFC 6052 length, with any operator bits. */
	allow_refused("[64:ff9b:1::/48]:443", "NAT64 local-use");
	allow_refused("[64:ff9b:1:a9fe:a9:fe00::]:443", "NAT64 local-use /48");
	allow_refused("[64:ff9b:1:aba9:fe:a9fe::]:443", "NAT64 local-use /56");
	allow_refused("[64:ff9b:1:1234:a9:fea9:fe00:0]:443", "NAT64 local-use /64");
	allow_refused("[64:ff9b:1:1:2:3:a9fe:a9fe]:443", "NAT64 local-use /96");
	/* The IPv4-compatible and -translated single addresses. */
	allow_refused("[::169.254.169.254]:443", "::169.254.169.254");
	allow_refused("[::ffff:0:a9fe:a9fe]:443", "::ffff:0:a9fe:a9fe");
	/* 6to4: the /48 of the address, and any prefix covering it. */
	allow_refused("[2002:a9fe:a9fe::/48]:443", "6to4");
	allow_refused("[2002:a9fe:a9fe:5::1]:443", "6to4");
	allow_refused("[2002:a9fe::/32]:443", "6to4");
	allow_refused("[2002:6464:64c8::/48]:443", "100.100.100.200");
	/* Teredo: client 169.254.169.254 stored inverted, any server/port. */
	allow_refused("[2001:0:4136:e378:8000:63bf:5601:5601]:443", "Teredo");
	allow_refused("[2001::/32]:443", "Teredo");
	/* ISATAP: an entry that fixes the interface identifier; a /64 is
	 * accepted (the rules refuse the ISATAP addresses in it). */
	allow_refused("[2001:db8:1:2:0:5efe:a9fe:a9fe]:443", "ISATAP");
	allow_refused("[2001:db8:1:2:200:5efe:a9fe:a9fe]:443", "ISATAP");
	allow_refused("[2001:db8:1:2:200:5efe::/96]:443", "ISATAP");
	accepted("egress", "{\"allow\":[\"[2001:db8:1:2::/64]:443\"]}");
	/* Near misses stay allowed: another IPv4 address in the same forms. */
	accepted("egress", "{\"allow\":[\"[2002:a9fe:a9fd::/48]:443\",\"[64:ff9b:1:a9fe:a9:fd00::]:443\","
			   "\"[2001:db8::5efe:a9fe:a9fd]:443\",\"[2001:0:1:2:3:4:5601:5602]:443\"]}");
}

static void test_forms_refused_elsewhere(void **state)
{
	(void)state;
	refused("dns", "{\"servers\":[\"64:ff9b:1::a9fe:a9fe\"]}", "dns.servers[0]");
	refused("dns", "{\"servers\":[\"2002:a9fe:a9fe::53\"]}", "6to4");
	/* An extra IPv4 address gets every form too. */
	refused("metadata", "{\"extra\":[\"10.20.0.5\"]}", "10.20.0.5");
	{
		json_t *root = tu_json(BASE_CONF);
		struct ng_err err;

		json_object_set_new(root, "metadata", tu_json("{\"extra\":[\"10.20.0.5\"]}"));
		json_object_set_new(root, "egress", tu_json("{\"allow\":[\"[2002:a14:5::/48]:443\"]}"));
		assert_int_equal(tu_config_code(root, &err), NG_E_CONFIG);
		assert_contains(err.msg, "6to4 (RFC 3056) form of the cloud metadata address 10.20.0.5");
	}
	/* A grant in a form: code 100, inside the envelope or not. */
	{
		json_t *root = tu_json(BASE_CONF), *rc = json_object();
		struct ng_config cfg;
		struct ng_annotations a;
		struct ng_err err = {0};

		json_object_set_new(root, "egress",
				    tu_json("{\"envelope\":[\"[2002::/16]:443\"],\"minPrefixV6\":16}"));
		json_object_set_new(
			rc, NG_ANNOTATIONS_CAP,
			tu_json("{\"netguard.boxxkite.io/egress\":\"[2002:a9fe:a9fe::/48]:443\"}"));
		json_object_set_new(root, "runtimeConfig", rc);
		assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
		assert_int_equal(ng_annotations_parse(root, &cfg, &a, &err), -1);
		assert_int_equal(err.code, NG_E_ENVELOPE);
		assert_contains(err.msg, "6to4");
		ng_annotations_free(&a);
		ng_config_free(&cfg);
		json_decref(root);
	}
}

/* README "Limits": lists above the limit are refused by name. */
static void test_list_limits(void **state)
{
	(void)state;
	json_t *root = tu_json(BASE_CONF), *extra = json_array();
	struct ng_err err;

	for (int i = 0; i <= NG_CONFIG_MAX_SHORT_LIST; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "10.30.%d.%d", i / 256, i % 256);
		json_array_append_new(extra, json_string(ip));
	}
	json_object_set_new(root, "metadata", json_pack("{s:o}", "extra", extra));
	assert_int_equal(tu_config_code(root, &err), NG_E_CONFIG);
	assert_contains(err.msg, "metadata.extra: 1025 entries, more than 1024");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_form_embedding),
		cmocka_unit_test(test_provider_list),
		cmocka_unit_test(test_forms_refused_in_allow),
		cmocka_unit_test(test_forms_refused_elsewhere),
		cmocka_unit_test(test_list_limits),
	};
	return cmocka_run_group_tests_name("metadata", tests, NULL, NULL);
}
