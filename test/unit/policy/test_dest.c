/* Destination syntax, addresses and envelope containment. */
#include "testutil.h"

#include "base/addr.h"
#include "policy/dest.h"

static struct ng_dest parse_ok(const char *s, bool wildcard)
{
	struct ng_dest d;
	struct ng_err err = {0};

	if (ng_dest_parse(s, wildcard, 7, &d, &err) != 0)
		fail_msg("\"%s\" should parse: %s", s, err.msg);
	return d;
}

static void parse_bad(const char *s, bool wildcard, const char *why)
{
	struct ng_dest d;
	struct ng_err err = {0};

	if (ng_dest_parse(s, wildcard, 7, &d, &err) == 0)
		fail_msg("\"%s\" should be refused", s);
	assert_int_equal(err.code, 7);
	assert_contains(err.msg, why);
	/* The message names the entry, so a user can find it. */
	assert_contains(err.msg, s);
}

static void test_ipv4_and_cidr(void **state)
{
	(void)state;
	struct ng_dest d = parse_ok("10.1.2.3:443", false);
	char buf[NG_IP_STRLEN];

	assert_int_equal(d.kind, NG_HOST_PREFIX);
	assert_int_equal(d.proto, NG_PROTO_TCP);
	assert_int_equal(d.net.plen, 32);
	assert_int_equal(d.port_lo, 443);
	assert_int_equal(d.port_hi, 443);
	ng_prefix_format(&d.net, buf, sizeof(buf));
	assert_string_equal(buf, "10.1.2.3");

	d = parse_ok("udp://10.20.0.0/16:53-60", false);
	assert_int_equal(d.proto, NG_PROTO_UDP);
	assert_int_equal(d.net.plen, 16);
	assert_int_equal(d.port_lo, 53);
	assert_int_equal(d.port_hi, 60);

	d = parse_ok("TCP://10.0.0.0/8:1-65535", false);
	assert_int_equal(d.proto, NG_PROTO_TCP);
	assert_int_equal(d.port_hi, 65535);
}

static void test_ipv6_brackets(void **state)
{
	(void)state;
	struct ng_dest d = parse_ok("[fd00::1]:443", false);
	char buf[NG_IP_STRLEN];

	assert_int_equal(d.net.ip.fam, NG_V6);
	assert_int_equal(d.net.plen, 128);
	d = parse_ok("udp://[fd00:20::/64]:5353", false);
	assert_int_equal(d.net.plen, 64);
	ng_prefix_format(&d.net, buf, sizeof(buf));
	assert_string_equal(buf, "fd00:20::/64");

	parse_bad("fd00::1:443", false, "brackets");
	parse_bad("[fd00::1]443", false, "port is required");
	parse_bad("[fd00::1:443", false, "missing ']'");
	parse_bad("[10.0.0.1]:443", false, "not an IPv6");
	parse_bad("[fd00::1%eth0]:443", false, "not an IPv6");
}

static void test_names_and_wildcards(void **state)
{
	(void)state;
	struct ng_dest d = parse_ok("S3.US-East-1.amazonaws.com.:443", false);

	assert_int_equal(d.kind, NG_HOST_NAME);
	assert_string_equal(d.name, "s3.us-east-1.amazonaws.com");

	d = parse_ok("*.amazonaws.com:443", true);
	assert_int_equal(d.kind, NG_HOST_WILDCARD);
	assert_string_equal(d.name, "amazonaws.com");

	parse_bad("*.amazonaws.com:443", false, "only allowed in egress.envelope");
	parse_bad("*.com:443", true, "at least two labels");
	parse_bad("*amazonaws.com:443", true, "*.suffix");
	parse_bad("a..b:443", false, "empty label");
	parse_bad("-a.example.com:443", false, "starts with '-'");
	parse_bad("a-.example.com:443", false, "ends with '-'");
	parse_bad("under_score.example.com:443", false, "letters, digits");
	parse_bad("10.0.0:443", false, "malformed IP");
	parse_bad("1.2.3.4.5:443", false, "malformed IP");
	parse_bad("010.0.0.1:443", false, "malformed IP");

	char longname[300];
	memset(longname, 'a', 70);
	strcpy(longname + 70, ".example.com:443");
	parse_bad(longname, false, "longer than 63");
}

static void test_ports(void **state)
{
	(void)state;
	parse_bad("10.0.0.1", false, "port is required");
	parse_bad("10.0.0.1:", false, "missing port");
	parse_bad("10.0.0.1:0", false, "out of range");
	parse_bad("10.0.0.1:65536", false, "out of range");
	parse_bad("10.0.0.1:999999", false, "out of range");
	parse_bad("10.0.0.1:-1", false, "not a number");
	parse_bad("10.0.0.1:+80", false, "not a number");
	parse_bad("10.0.0.1:80-", false, "not a number");
	parse_bad("10.0.0.1:90-80", false, "reversed");
	parse_bad("10.0.0.1:80-90-100", false, "PORT or PORT-PORT");
	parse_bad("10.0.0.1:80 ", false, "PORT or PORT-PORT");
	parse_bad("http://10.0.0.1:80", false, "tcp:// or udp://");
	parse_bad(":80", false, "empty host");
}

static void test_cidr_refusals(void **state)
{
	(void)state;
	parse_bad("10.1.2.3/8:443", false, "host bits set");
	parse_bad("10.0.0.0/33:443", false, "too long");
	parse_bad("10.0.0.0/:443", false, "not a number");
	parse_bad("10.0.0.0/08:443", false, "not a number");
	parse_bad("[fd00::1/64]:443", false, "host bits");
}

static void test_within(void **state)
{
	(void)state;
	struct ng_dest env = parse_ok("10.0.0.0/8:400-500", false);
	struct ng_dest envname = parse_ok("*.example.com:443", true);
	struct ng_dest exact = parse_ok("api.internal.test:443", false);

	assert_true(ng_dest_within((struct ng_dest[]){parse_ok("10.1.0.0/16:443", false)}, &env));
	assert_true(ng_dest_within((struct ng_dest[]){parse_ok("10.1.2.3:400-500", false)}, &env));
	assert_true(ng_dest_within(&env, &env));
	/* Port range must lie inside. */
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("10.1.2.3:399-450", false)}, &env));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("10.1.2.3:450-501", false)}, &env));
	/* Protocol must be equal. */
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("udp://10.1.2.3:443", false)}, &env));
	/* CIDR inside CIDR, never wider. */
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("10.0.0.0/7:443", false)}, &env));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("11.0.0.1:443", false)}, &env));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("[fd00::1]:443", false)}, &env));
	/* Wildcards match one or more whole labels, never the bare suffix. */
	assert_true(ng_dest_within((struct ng_dest[]){parse_ok("s3.example.com:443", false)}, &envname));
	assert_true(ng_dest_within((struct ng_dest[]){parse_ok("a.b.example.com:443", false)}, &envname));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("example.com:443", false)}, &envname));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("evilexample.com:443", false)}, &envname));
	assert_false(
		ng_dest_within((struct ng_dest[]){parse_ok("example.com.evil.net:443", false)}, &envname));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("s3.example.com:80", false)}, &envname));
	/* Names are never inside CIDRs and addresses never inside names. */
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("s3.example.com:443", false)}, &env));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("10.0.0.1:443", false)}, &envname));
	/* Exact names: equal only. */
	assert_true(ng_dest_within(&exact, &exact));
	assert_false(ng_dest_within((struct ng_dest[]){parse_ok("x.api.internal.test:443", false)}, &exact));
}

static void test_addr_arith(void **state)
{
	(void)state;
	struct ng_prefix p;
	struct ng_ip ip, last;
	char buf[NG_IP_STRLEN];

	assert_int_equal(ng_prefix_parse("10.1.0.0/16", &p, NULL), 0);
	ng_prefix_last(&p, &last);
	ng_ip_format(&last, buf, sizeof(buf));
	assert_string_equal(buf, "10.1.255.255");
	assert_int_equal(ng_prefix_parse("fe80::/10", &p, NULL), 0);
	ng_prefix_last(&p, &last);
	ng_ip_format(&last, buf, sizeof(buf));
	assert_string_equal(buf, "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff");

	assert_int_equal(ng_ip_parse("255.255.255.255", &ip), 0);
	assert_false(ng_ip_inc(&ip)); /* wraps */
	assert_int_equal(ng_ip_parse("10.0.0.255", &ip), 0);
	assert_true(ng_ip_inc(&ip));
	ng_ip_format(&ip, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.1.0");
	assert_true(ng_ip_dec(&ip));
	ng_ip_format(&ip, buf, sizeof(buf));
	assert_string_equal(buf, "10.0.0.255");
	assert_int_equal(ng_ip_parse("0.0.0.0", &ip), 0);
	assert_false(ng_ip_dec(&ip));

	assert_int_equal(ng_ip_parse("::ffff:169.254.169.254", &ip), 0);
	assert_int_equal(ip.fam, NG_V6);
	assert_int_not_equal(ng_ip_parse("1.2.3", &ip), 0);
	assert_int_not_equal(ng_ip_parse("", &ip), 0);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_and_cidr),
		cmocka_unit_test(test_ipv6_brackets),
		cmocka_unit_test(test_names_and_wildcards),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_cidr_refusals),
		cmocka_unit_test(test_within),
		cmocka_unit_test(test_addr_arith),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("dest", tests, NULL, NULL);
}
