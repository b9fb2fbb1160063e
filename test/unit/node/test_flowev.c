/* The flow log's lines (node/flowev.h) and requests (node/flowreq.h): an
 * NFLOG message of each table and category into an event with the
 * comment of the rule that refused it, JSON there and back, the text
 * line, what a filter lets through, durations, the agent's request line. */
#include "testutil.h"

#include <netinet/in.h> /* before linux/netfilter.h, which would define in_addr */
#include <linux/netfilter.h>

#include "node/flowev.h"
#include "node/flowreq.h"

static struct ng_nflog_record rec(uint8_t family, const char *prefix, const char *src, const char *dst,
				  uint8_t proto, uint16_t sport, uint16_t dport)
{
	struct ng_nflog_record r = {.group = 65054, .family = family, .prefix = prefix, .proto = proto};

	assert_int_equal(ng_ip_parse(src, &r.src), 0);
	assert_int_equal(ng_ip_parse(dst, &r.dst), 0);
	r.have_ports = proto == IPPROTO_TCP || proto == IPPROTO_UDP;
	r.sport = sport;
	r.dport = dport;
	return r;
}

static const struct ng_flow_who WEB = {
	.ns = "sandboxes", .name = "web", .deny_known = true, .deny = NG_DENY_REJECT};

static void test_prefix(void **state)
{
	(void)state;
	char cat[16];
	bool wd;

	assert_true(ng_flowev_parse_prefix("netguard egress sandboxes/web: ", cat, sizeof(cat), &wd));
	assert_string_equal(cat, "egress");
	assert_false(wd);
	assert_true(ng_flowev_parse_prefix("netguard would_deny raw staging/a: ", cat, sizeof(cat), &wd));
	assert_string_equal(cat, "raw");
	assert_true(wd);
	assert_false(ng_flowev_parse_prefix("netguard sideways x/y: ", cat, sizeof(cat), &wd));
	assert_false(ng_flowev_parse_prefix("netguard egress", cat, sizeof(cat), &wd));
	assert_false(ng_flowev_parse_prefix("iptables DROP ", cat, sizeof(cat), &wd));
	assert_false(ng_flowev_parse_prefix(NULL, cat, sizeof(cat), &wd));
}

static void test_from_nflog(void **state)
{
	(void)state;
	struct ng_nflog_record r = rec(NFPROTO_IPV4, "netguard egress sandboxes/web: ", "10.244.1.5",
				       "10.50.0.9", IPPROTO_TCP, 40443, 443);
	struct ng_flow_ev ev;

	r.have_ts = true;
	r.ts_sec = 1700000000;
	r.ts_usec = 250000;
	ng_flowev_from_nflog(&r, &WEB, false, 1, &ev);
	assert_int_equal(ev.kind, NG_FLOW_REFUSAL);
	assert_int_equal(ev.ts_ms, 1700000000250LL);
	assert_int_equal(ev.table, NG_LOG_POD);
	assert_string_equal(ev.category, "egress");
	assert_false(ev.ingress);
	assert_false(ev.would_deny);
	assert_string_equal(ev.ns, "sandboxes");
	assert_string_equal(ev.comment, "egress not allowed: TCP reset, so connect() fails at once");
	/* UDP: the ICMP rule; drop as the denyAction; unknown: named, not guessed. */
	r.proto = IPPROTO_UDP;
	ng_flowev_from_nflog(&r, &WEB, false, 1, &ev);
	assert_string_equal(ev.comment, "egress not allowed: ICMP administratively prohibited");
	ng_flowev_from_nflog(
		&r, &(struct ng_flow_who){.ns = "a", .name = "b", .deny_known = true, .deny = NG_DENY_DROP},
		false, 1, &ev);
	assert_string_equal(ev.comment, "egress not allowed: drop");
	ng_flowev_from_nflog(&r, &(struct ng_flow_who){.ns = "a", .name = "b"}, false, 1, &ev);
	assert_string_equal(ev.comment, "egress not allowed: refused (denyAction)");
	/* No time from the kernel (or a mad one): the reader's. */
	r.have_ts = false;
	ng_flowev_from_nflog(&r, &WEB, false, 42, &ev);
	assert_int_equal(ev.ts_ms, 42);
	r.have_ts = true;
	r.ts_sec = INT64_MAX;
	ng_flowev_from_nflog(&r, &WEB, false, 42, &ev);
	assert_int_equal(ev.ts_ms, 42);

	/* Ingress: the direction; a netdev message: the guard, or the node side. */
	r = rec(NFPROTO_IPV4, "netguard ingress sandboxes/web: ", "10.98.0.2", "10.244.1.5", IPPROTO_TCP,
		4000, 8080);
	ng_flowev_from_nflog(&r, &WEB, false, 1, &ev);
	assert_true(ev.ingress);
	assert_string_equal(ev.comment, "ingress not allowed: drop");
	r = rec(NFPROTO_NETDEV, "netguard would_deny raw staging/a: ", "10.244.1.5", "10.50.0.9", IPPROTO_TCP,
		1, 443);
	ng_flowev_from_nflog(&r, &WEB, false, 1, &ev);
	assert_int_equal(ev.table, NG_LOG_GUARD);
	assert_true(ev.would_deny);
	assert_string_equal(ev.comment,
			    "frame not allowed: AUDIT (enforce.auditNamespaces): let through, not enforcing");
	r.prefix = "netguard host sandboxes/web: ";
	ng_flowev_from_nflog(&r, &WEB, true, 1, &ev);
	assert_int_equal(ev.table, NG_LOG_NODE);
	assert_string_equal(ev.category, "host");
	/* A frame that is not IP: its type. */
	memset(&r.src, 0, sizeof(r.src));
	r.ethertype = 0x8100;
	ng_flowev_from_nflog(&r, &WEB, true, 1, &ev);
	assert_int_equal(ev.ethertype, 0x8100);
	assert_int_equal(ev.proto, 0);
}

/* A prefix not ours (a pod with NET_ADMIN logging to the group): shown as
 * foreign, its bytes made printable. */
static void test_foreign(void **state)
{
	(void)state;
	struct ng_nflog_record r =
		rec(NFPROTO_IPV4, "evil\n\"\xff", "10.244.1.5", "10.50.0.9", IPPROTO_TCP, 1, 2);
	struct ng_flow_ev ev;
	json_t *j;

	ng_flowev_from_nflog(&r, &WEB, false, 1, &ev);
	assert_string_equal(ev.category, "foreign");
	assert_string_equal(ev.comment, "evil\\x0a\"\\xff");
	j = ng_flowev_to_json(&ev);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "comment")), "evil\\x0a\"\\xff");
	json_decref(j);
}

static void test_json_round_trip(void **state)
{
	(void)state;
	struct ng_nflog_record r = rec(NFPROTO_IPV6, "netguard metadata sandboxes/web: ", "fd00:244:1::5",
				       "fd00:ec2::254", IPPROTO_TCP, 40080, 80);
	struct ng_flow_ev ev, back;
	struct ng_err err = {0};
	json_t *j;

	ng_flowev_from_nflog(&r, &WEB, false, 1796000000123LL, &ev);
	ev.seq = 7;
	j = ng_flowev_to_json(&ev);
	assert_string_equal(json_string_value(json_object_get(j, "ts")), "2026-11-30T00:53:20.123Z");
	assert_string_equal(json_string_value(json_object_get(j, "event")), "refusal");
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "refused");
	assert_string_equal(json_string_value(json_object_get(j, "proto")), "tcp");
	assert_string_equal(json_string_value(json_object_get(j, "dst")), "fd00:ec2::254");
	assert_int_equal(json_integer_value(json_object_get(j, "dport")), 80);
	assert_int_equal(json_integer_value(json_object_get(j, "seq")), 7);
	assert_int_equal(ng_flowev_from_json(j, &back, &err), 0);
	json_decref(j);
	assert_int_equal(back.ts_ms, ev.ts_ms);
	assert_int_equal(back.seq, 7);
	assert_string_equal(back.category, "metadata");
	assert_true(ng_ip_eq(&back.dst, &ev.dst));
	assert_int_equal(back.proto, IPPROTO_TCP);
	assert_int_equal(back.sport, 40080);
	assert_string_equal(back.comment, ev.comment);

	/* Notes, and a refused query. */
	ng_flowev_note(&ev, NG_FLOW_SKIPPED, "sandboxes", "web", NG_LOG_GUARD, 2990, "over the rate", 5000);
	j = ng_flowev_to_json(&ev);
	assert_int_equal(json_integer_value(json_object_get(j, "skipped")), 2990);
	assert_string_equal(json_string_value(json_object_get(j, "table")), "guard");
	assert_int_equal(ng_flowev_from_json(j, &back, &err), 0);
	json_decref(j);
	assert_int_equal(back.kind, NG_FLOW_SKIPPED);
	assert_int_equal(back.count, 2990);
	assert_int_equal(back.table, NG_LOG_GUARD);
	r = rec(NFPROTO_IPV4, NULL, "10.244.1.5", "10.96.0.11", IPPROTO_UDP, 5353, 53);
	memset(&ev, 0, sizeof(ev));
	snprintf(ev.category, sizeof(ev.category), NG_FLOW_DNS);
	ev.src = r.src;
	ev.dst = r.dst;
	ev.proto = IPPROTO_UDP;
	ev.have_ports = true;
	ng_flowev_set_query(&ev, "leak\x01.example", 16);
	assert_string_equal(ev.query, "leak\\x01.example");
	j = ng_flowev_to_json(&ev);
	assert_int_equal(ng_flowev_from_json(j, &back, &err), 0);
	assert_string_equal(back.query, "leak\\x01.example");
	assert_int_equal(back.qtype, 16);
	json_decref(j);

	/* Not a line of ours. */
	j = json_pack("{s:s}", "event", "sideways");
	assert_int_equal(ng_flowev_from_json(j, &back, &err), -1);
	json_decref(j);
	j = json_pack("{s:s,s:s}", "event", "refusal", "ts", "yesterday");
	assert_int_equal(ng_flowev_from_json(j, &back, &err), -1);
	json_decref(j);
}

static void test_text(void **state)
{
	(void)state;
	struct ng_nflog_record r = rec(NFPROTO_IPV6, "netguard egress sandboxes/web: ", "fd00:244:1::5",
				       "fd00:50::9", IPPROTO_TCP, 40446, 443);
	struct ng_flow_ev ev;
	char line[1200];

	ng_flowev_from_nflog(&r, &WEB, false, 1796000000123LL, &ev);
	ng_flowev_text(&ev, line, sizeof(line));
	assert_string_equal(line, "2026-11-30T00:53:20.123Z sandboxes/web egress pod egress REFUSED tcp "
				  "[fd00:244:1::5]:40446 -> [fd00:50::9]:443 (egress not allowed: TCP reset, "
				  "so connect() fails at once)");
	ng_flowev_note(&ev, NG_FLOW_SKIPPED, "sandboxes", "web", NG_LOG_POD, 12, "over the rate",
		       1796000000123LL);
	ng_flowev_text(&ev, line, sizeof(line));
	assert_string_equal(line,
			    "2026-11-30T00:53:20.123Z sandboxes/web skipped 12 refusal(s) of the pod table: "
			    "over the rate");
	ng_flowev_note(&ev, NG_FLOW_DROPPED, NULL, NULL, NG_LOG_POD, 3, "fell behind", 1796000000123LL);
	ng_flowev_text(&ev, line, sizeof(line));
	assert_string_equal(line, "2026-11-30T00:53:20.123Z - dropped 3 event(s): fell behind");
}

static void test_filter(void **state)
{
	(void)state;
	struct ng_flow_filter f = {0};
	struct ng_err err = {0};
	struct ng_nflog_record r = rec(NFPROTO_IPV4, "netguard egress sandboxes/web: ", "10.244.1.5",
				       "10.50.0.9", IPPROTO_TCP, 1, 443);
	struct ng_flow_ev ev, other, note, drop;

	ng_flowev_from_nflog(&r, &WEB, false, 5000, &ev);
	r.prefix = "netguard would_deny egress staging/aud: ";
	ng_flowev_from_nflog(&r, &(struct ng_flow_who){.ns = "staging", .name = "aud"}, false, 5000, &other);
	ng_flowev_note(&note, NG_FLOW_SKIPPED, "sandboxes", "web", NG_LOG_POD, 1, "x", 5000);
	ng_flowev_note(&drop, NG_FLOW_DROPPED, NULL, NULL, NG_LOG_POD, 1, "x", 5000);
	assert_true(ng_flow_match(&f, &ev) && ng_flow_match(&f, &other));
	assert_int_equal(ng_flow_filter_pod(&f, "sandboxes/web", &err), 0);
	assert_true(ng_flow_match(&f, &ev));
	assert_false(ng_flow_match(&f, &other));
	assert_true(ng_flow_match(&f, &note));
	assert_true(ng_flow_match(&f, &drop)); /* the stream's own note: every reader's */
	assert_int_equal(ng_flow_filter_category(&f, "metadata", &err), 0);
	assert_false(ng_flow_match(&f, &ev));
	assert_true(ng_flow_match(&f, &note)); /* notes whatever the category */
	memset(&f, 0, sizeof(f));
	assert_int_equal(ng_flow_filter_category(&f, "would_deny", &err), 0);
	assert_false(ng_flow_match(&f, &ev));
	assert_true(ng_flow_match(&f, &other));
	f.category[0] = '\0';
	f.since_ms = 5001;
	assert_false(ng_flow_match(&f, &ev));
	assert_int_equal(ng_flow_filter_category(&f, "sideways", &err), -1);
	assert_contains(err.msg, "dns-refused");
	for (const char *bad[] = {"web", "/web", "ns/", "a/b/c", NULL}, **b = bad; *b; b++)
		assert_int_equal(ng_flow_filter_pod(&f, *b, &err), -1);
}

static void test_duration(void **state)
{
	(void)state;
	assert_int_equal(ng_duration_ms("30s"), 30000);
	assert_int_equal(ng_duration_ms("90"), 90000);
	assert_int_equal(ng_duration_ms("5m"), 300000);
	assert_int_equal(ng_duration_ms("2h"), 7200000);
	assert_int_equal(ng_duration_ms("500ms"), 500);
	assert_int_equal(ng_duration_ms("1.5s"), 1500);
	for (const char *bad[] = {"", "-1s", "5x", "s", "nan", "inf", " 5", "1e99", NULL}, **b = bad; *b; b++)
		assert_int_equal(ng_duration_ms(*b), -1);
}

static void test_who_of_prefix(void **state)
{
	(void)state;
	char ns[64], name[254];

	ng_flowev_who_of_prefix("netguard would_deny host staging/aud: ", ns, sizeof(ns), name, sizeof(name));
	assert_string_equal(ns, "staging");
	assert_string_equal(name, "aud");
	ng_flowev_who_of_prefix("netguard host nothing: ", ns, sizeof(ns), name, sizeof(name));
	assert_string_equal(ns, "?");
	ng_flowev_who_of_prefix(NULL, ns, sizeof(ns), name, sizeof(name));
	assert_string_equal(name, "?");
}

static void test_request(void **state)
{
	(void)state;
	struct ng_flow_req r = {.op = NG_FLOW_OP_OBSERVE, .history = true, .follow = true}, back;
	struct ng_err err = {0};
	char line[NG_FLOW_REQ_MAX];
	int n;

	assert_int_equal(ng_flow_filter_pod(&r.filter, "sandboxes/web", &err), 0);
	assert_int_equal(ng_flow_filter_category(&r.filter, "egress", &err), 0);
	r.filter.since_ms = 1796000000000LL;
	n = ng_flow_req_line(&r, line, sizeof(line));
	assert_true(n > 0 && line[n - 1] == '\n');
	assert_int_equal(ng_flow_req_parse(line, (size_t)n - 1, &back, &err), 0);
	assert_int_equal(back.op, NG_FLOW_OP_OBSERVE);
	assert_true(back.filter.pod && back.history && back.follow);
	assert_string_equal(back.filter.name, "web");
	assert_string_equal(back.filter.category, "egress");
	assert_int_equal(back.filter.since_ms, 1796000000000LL);
	r = (struct ng_flow_req){.op = NG_FLOW_OP_NAMES};
	n = ng_flow_req_line(&r, line, sizeof(line));
	assert_int_equal(ng_flow_req_parse(line, (size_t)n - 1, &back, &err), 0);
	assert_int_equal(back.op, NG_FLOW_OP_NAMES);
	assert_false(back.filter.pod);
	static const char *const bad[] = {"",
					  "[]",
					  "{}",
					  "{\"op\":\"delete\"}",
					  "{\"op\":\"observe\",\"x\":1}",
					  "{\"op\":\"observe\",\"pod\":7}",
					  "{\"op\":\"observe\",\"pod\":\"web\"}",
					  "{\"op\":\"observe\",\"category\":\"nope\"}",
					  "{\"op\":\"observe\",\"since_ms\":-1}",
					  "{\"op\":\"observe\",\"follow\":1}",
					  "{\"op\":\"observe\",\"op\":\"names\"}",
					  NULL};
	for (const char *const *b = bad; *b; b++)
		assert_int_equal(ng_flow_req_parse(*b, strlen(*b), &back, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix),   cmocka_unit_test(test_from_nflog),
		cmocka_unit_test(test_foreign),  cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_text),     cmocka_unit_test(test_filter),
		cmocka_unit_test(test_duration), cmocka_unit_test(test_who_of_prefix),
		cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
