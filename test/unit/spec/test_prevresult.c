/* prevResult: what we read from it and how it is handed back. */
#include "testutil.h"

#include "spec/prevresult.h"

#define PREV_10                                                                                       \
	"{\"cniVersion\":\"1.1.0\",\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"aa:bb:cc:dd:ee:ff\"," \
	"\"sandbox\":\"/var/run/netns/x\",\"mtu\":1500}],"                                            \
	"\"ips\":[{\"address\":\"10.88.0.5/16\",\"gateway\":\"10.88.0.1\",\"interface\":0},"          \
	"{\"address\":\"fd00:88::5/64\",\"gateway\":\"fd00:88::1\",\"interface\":0},"                 \
	"{\"address\":\"10.99.0.5/24\",\"gateway\":\"10.88.0.1\"}],"                                  \
	"\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.88.0.1\",\"mtu\":1400}],"                     \
	"\"dns\":{\"nameservers\":[\"10.96.0.10\"]},\"x-vendor\":{\"kept\":true}}"

static void test_parse(void **state)
{
	(void)state;
	struct ng_prev p;
	struct ng_err err = {0};
	json_t *j = tu_json(PREV_10);
	char buf[NG_IP_STRLEN];

	assert_int_equal(ng_prev_parse(j, &p, &err), 0);
	assert_int_equal(p.addrs.n, 3);
	assert_int_equal(p.addrs.v[0].plen, 16);
	ng_ip_format(&p.addrs.v[0].ip, buf, sizeof(buf));
	assert_string_equal(buf, "10.88.0.5"); /* the address itself, not masked */
	assert_int_equal(p.addrs.v[1].ip.fam, NG_V6);
	assert_int_equal(p.gateways.n, 2); /* deduplicated */
	ng_prev_free(&p);
	json_decref(j);
}

static void expect_bad(const char *text, const char *why)
{
	struct ng_prev p;
	struct ng_err err = {0};
	json_t *j = tu_json(text);

	assert_int_equal(ng_prev_parse(j, &p, &err), -1);
	assert_int_equal(err.code, NG_E_CONFIG);
	assert_contains(err.msg, why);
	ng_prev_free(&p);
	json_decref(j);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_bad("[]", "must be an object");
	expect_bad("{\"ips\":{}}", "must be an array");
	expect_bad("{\"ips\":[{\"address\":\"10.0.0.1\"}]}", "ips[0].address");
	expect_bad("{\"ips\":[{\"address\":\"10.0.0.1/33\"}]}", "ips[0].address");
	expect_bad("{\"ips\":[{\"address\":\"10.0.0.1/24\"},{\"address\":\"x/24\"}]}", "ips[1].address");
	expect_bad("{\"ips\":[{\"address\":\"10.0.0.1/24\",\"gateway\":\"10.0.0\"}]}", "ips[0].gateway");
	expect_bad("{\"ip4\":{\"ip\":\"10.0.0.1/24\"}}", "0.2.0 result format");

	struct ng_prev p;
	struct ng_err err = {0};
	json_t *j = tu_json("{\"cniVersion\":\"1.0.0\"}");
	assert_int_equal(ng_prev_parse(j, &p, &err), 0); /* no ips: nothing to learn */
	assert_int_equal(p.addrs.n, 0);
	ng_prev_free(&p);
	json_decref(j);
}

static json_t *convert(const char *text, const char *version)
{
	struct ng_err err = {0};
	json_t *in = tu_json(text);
	json_t *out = ng_prev_convert(in, version, &err);

	json_decref(in);
	if (!out)
		fail_msg("convert to %s failed: %s", version, err.msg);
	return out;
}

static void test_convert_down(void **state)
{
	(void)state;
	static const char *const old[] = {"0.3.0", "0.3.1", "0.4.0"};

	for (int i = 0; i < 3; i++) {
		json_t *r = convert(PREV_10, old[i]);
		json_t *ips = json_object_get(r, "ips");

		assert_string_equal(json_string_value(json_object_get(r, "cniVersion")), old[i]);
		assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 0), "version")),
				    "4");
		assert_string_equal(json_string_value(json_object_get(json_array_get(ips, 1), "version")),
				    "6");
		/* 1.1.0 fields are dropped; everything else is kept. */
		assert_null(json_object_get(json_array_get(json_object_get(r, "interfaces"), 0), "mtu"));
		assert_null(json_object_get(json_array_get(json_object_get(r, "routes"), 0), "mtu"));
		assert_non_null(json_object_get(json_array_get(json_object_get(r, "interfaces"), 0), "mac"));
		assert_non_null(json_object_get(r, "x-vendor"));
		assert_non_null(json_object_get(r, "dns"));
		json_decref(r);
	}
}

static void test_convert_up(void **state)
{
	(void)state;
	const char *v031 =
		"{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.88.0.5/16\"}]}";
	json_t *r = convert(v031, "1.0.0");

	assert_string_equal(json_string_value(json_object_get(r, "cniVersion")), "1.0.0");
	assert_null(json_object_get(json_array_get(json_object_get(r, "ips"), 0), "version"));
	json_decref(r);

	/* Same version in and out: identical apart from nothing. */
	json_t *in = tu_json(PREV_10);
	r = convert(PREV_10, "1.1.0");
	assert_true(json_equal(in, r));
	json_decref(in);
	json_decref(r);

	/* A bad address cannot be given an IP version. */
	struct ng_err err = {0};
	in = tu_json("{\"ips\":[{\"address\":\"nonsense\"}]}");
	assert_null(ng_prev_convert(in, "0.4.0", &err));
	assert_int_equal(err.code, NG_E_CONFIG);
	json_decref(in);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_convert_down),
		cmocka_unit_test(test_convert_up),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("prevresult", tests, NULL, NULL);
}
