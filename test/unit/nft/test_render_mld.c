/* The MLD rules of every table (nft/render_mld.h) run against reports as
 * bytes. A small evaluator of the expressions they use (payload, cmp, meta
 * len, lookup, immediate) walks the rules in the batch, from each rule that
 * jumps to mld_report, so each case says what a report meets in the inet
 * table (meta len: the packet), the packet-socket guard (the frame: 14
 * more) and the host side (netdev ingress: the packet again). The reports
 * are the kernel's (net/ipv6/mcast.c; one captured from an idle pod) and
 * ones a process with NET_RAW could write. Also the shape: the chains, the
 * rule from :: before the source check, the set's typeof userdata. */
#include "mld_eval.h"

#include "nft/render_host.h"

/* ---- reports ------------------------------------------------------------------- */

struct rec {
	uint8_t type;
	const char *group;
	uint8_t aux;
	uint16_t nsrcs;
};

#define R(t, g)                           \
	{                                 \
		.type = (t), .group = (g) \
	}
#define LL   "fe80::42:aff:fef4:105"
#define OWN  "ff02::1:ff00:5"   /* fd00:244:1::5's */
#define OWNL "ff02::1:fff4:105" /* the link-local's (MAC 02:42:0a:f4:01:05) */

/* The kernel's report (mld_newpack, add_grhead) from `src` with these
 * records, and `extra` bytes after it that the payload length leaves out. */
static uint32_t report(uint8_t *out, const char *src, const struct rec *r, int n, int extra)
{
	static const uint8_t hbh[8] = {58, 0, 5, 2, 0, 0, 1, 0};
	struct ng_ip a;
	uint32_t at = 56;

	memset(out, 0, 1024);
	out[0] = 0x60;
	out[6] = 0; /* hop-by-hop */
	out[7] = 1;
	assert_int_equal(ng_ip_parse(src, &a), 0);
	memcpy(out + 8, a.a, 16);
	assert_int_equal(ng_ip_parse("ff02::16", &a), 0);
	memcpy(out + 24, a.a, 16);
	memcpy(out + 40, hbh, 8);
	out[48] = 143;
	out[55] = (uint8_t)n;
	for (int i = 0; i < n; i++) {
		out[at] = r[i].type;
		out[at + 1] = r[i].aux;
		out[at + 3] = (uint8_t)r[i].nsrcs;
		assert_int_equal(ng_ip_parse(r[i].group, &a), 0);
		memcpy(out + at + 4, a.a, 16);
		at += 20 + 16u * r[i].nsrcs + 4u * r[i].aux;
	}
	out[4] = (uint8_t)((at - 40) >> 8);
	out[5] = (uint8_t)(at - 40);
	return at + (uint32_t)extra;
}

/* The three tables of one policy: the pod's inet table and guard (one
 * batch), the host side (another). */
struct tables {
	struct table_rules inet, guard, host;
	struct ng_batch pod, node;
};

static void policy_with(struct ng_policy *p, const char *const *groups, int n)
{
	static const uint8_t mac[6] = {0x02, 0x42, 0x0a, 0xf4, 0x01, 0x05};

	sample_policy(p, NG_DENY_REJECT);
	p->mld6.n = 0;
	for (int i = 0; i < n; i++)
		add_ip(&p->mld6, groups[i]);
	add_ip(&p->source[1], LL);
	p->host = true;
	snprintf(p->host_dev, sizeof(p->host_dev), "veth1234");
	p->host_ifindex = 42;
	memcpy(p->mac, mac, 6);
}

static void tables_render(const struct ng_policy *p, struct tables *t)
{
	struct ng_err err = {0};

	memset(t, 0, sizeof(*t));
	t->inet = (struct table_rules){.family = NFPROTO_INET, .table = NG_TABLE};
	t->guard = (struct table_rules){.family = NFPROTO_NETDEV, .table = NG_TABLE};
	t->host = (struct table_rules){.family = NFPROTO_NETDEV, .table = "ngh.cid.eth0"};
	assert_int_equal(ng_batch_init(&t->pod, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(p, &t->pod, &err), 0);
	assert_int_equal(ng_batch_walk(&t->pod, keep_rules, &t->inet), 0);
	assert_int_equal(ng_batch_walk(&t->pod, keep_rules, &t->guard), 0);
	assert_int_equal(ng_batch_init(&t->node, "ngh.cid.eth0", 1, &err), 0);
	assert_int_equal(ng_render_host(p, false, NULL, 0, &t->node, &err), 0);
	assert_int_equal(ng_batch_walk(&t->node, keep_rules, &t->host), 0);
}

static void tables_free(struct tables *t)
{
	rules_free(&t->inet);
	rules_free(&t->guard);
	rules_free(&t->host);
	ng_batch_free(&t->pod);
	ng_batch_free(&t->node);
}

/* The report of `len` bytes in all three tables: accepted in each, or in none. */
static void expect(const struct tables *t, const ng_ip_vec *groups, const uint8_t *nh, uint32_t len,
		   bool want, const char *what)
{
	const struct pkt inet = {.nh = nh, .len = len, .meta_len = len, .groups = groups},
			 guard = {.nh = nh, .len = len, .meta_len = 14 + len, .groups = groups};

	if (accepted(&t->inet, NG_CHAIN_EGRESS, &inet) != want)
		fail_msg("inet table: %s: %s", what, want ? "refused" : "let out");
	if (accepted(&t->guard, NG_RAW_CHAIN_V6, &guard) != want)
		fail_msg("guard: %s: %s", what, want ? "refused" : "let out");
	if (accepted(&t->host, NG_RAW_CHAIN_V6, &inet) != want)
		fail_msg("host side: %s: %s", what, want ? "refused" : "let out");
}

/* What an idle pod's kernel sent (captured in the test world, NFLOG of the
 * pod's table, before this change: counted as egress denied): state-change
 * reports of its two solicited-node groups joined together, CHANGE_TO_
 * EXCLUDE each, and after DAD the same two records again. */
static void test_kernel_reports(void **state)
{
	(void)state;
	static const uint8_t captured[96] = {
		0x60, 0x00, 0x00, 0x00, 0x00, 0x38, 0x00, 0x01, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x04, 0x2d, 0x42, 0xff, 0xfe, 0x27, 0x25, 0xe5, 0xff, 0x02, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x16, 0x3a, 0x00,
		0x05, 0x02, 0x00, 0x00, 0x01, 0x00, 0x8f, 0x00, 0xdd, 0xa7, 0x00, 0x00, 0x00, 0x02,
		0x04, 0x00, 0x00, 0x00, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x01, 0xff, 0x27, 0x25, 0xe5, 0x04, 0x00, 0x00, 0x00, 0xff, 0x02, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x02};
	static const char *const captured_groups[] = {"ff02::1:ff27:25e5", "ff02::1:ff00:2"};
	static const char *const groups[] = {OWN, OWNL};
	struct ng_policy p;
	struct tables t;
	uint8_t pkt[1024];
	uint32_t n;

	policy_with(&p, captured_groups, 2);
	tables_render(&p, &t);
	expect(&t, &p.mld6, captured, sizeof(captured), true, "the captured two-record report");
	/* The same from ::, as sent while the link-local address is tentative. */
	memcpy(pkt, captured, sizeof(captured));
	memset(pkt + 8, 0, 16);
	expect(&t, &p.mld6, pkt, sizeof(captured), true, "the captured report from ::");
	tables_free(&t);
	ng_policy_free(&p);

	policy_with(&p, groups, 2);
	tables_render(&p, &t);
	n = report(pkt, LL, (struct rec[]){R(4, OWN)}, 1, 0);
	expect(&t, &p.mld6, pkt, n, true, "one record, to-exclude");
	n = report(pkt, LL, (struct rec[]){R(4, OWNL), R(4, OWN)}, 2, 0);
	expect(&t, &p.mld6, pkt, n, true, "both groups, to-exclude");
	n = report(pkt, LL, (struct rec[]){R(3, OWN), R(2, OWNL)}, 2, 0);
	expect(&t, &p.mld6, pkt, n, true, "to-include (leaving) and is-exclude (a query's answer)");
	n = report(pkt, "::", (struct rec[]){R(4, OWN)}, 1, 0);
	expect(&t, &p.mld6, pkt, n, true, "one record from ::");
	tables_free(&t);
	ng_policy_free(&p);
}

/* What a process could write or make the kernel write: nothing of its
 * choosing leaves, in any table. */
static void test_chosen_bytes_refused(void **state)
{
	(void)state;
	static const char *const groups[] = {OWN, OWNL};
	struct ng_policy p;
	struct tables t;
	uint8_t pkt[1024];
	uint32_t n;

	policy_with(&p, groups, 2);
	tables_render(&p, &t);
	n = report(pkt, LL, (struct rec[]){R(4, "ff0e::6e67:6c65:616b:2121")}, 1, 0);
	expect(&t, &p.mld6, pkt, n, false, "a joined group's 16 bytes");
	n = report(pkt, LL, (struct rec[]){R(4, OWN), R(4, "ff02::1:ffab:cdef")}, 2, 0);
	expect(&t, &p.mld6, pkt, n, false, "its own group and a chosen one");
	n = report(pkt, LL, (struct rec[]){R(4, "ff02::1:ffab:cdef"), R(4, OWN)}, 2, 0);
	expect(&t, &p.mld6, pkt, n, false, "a chosen group first, then its own");
	n = report(pkt, "::", (struct rec[]){R(4, "ff05::1:3")}, 1, 0);
	expect(&t, &p.mld6, pkt, n, false, "a chosen group from ::");
	for (uint8_t type = 0; type < 8; type++) {
		if (type >= 2 && type <= 4)
			continue;
		n = report(pkt, LL, (struct rec[]){R(type, OWN)}, 1, 0);
		expect(&t, &p.mld6, pkt, n, false, "a record type the kernel never writes for its groups");
	}
	n = report(pkt, LL, (struct rec[]){R(4, OWN), R(4, OWNL), R(4, OWN)}, 3, 0);
	expect(&t, &p.mld6, pkt, n, false, "more records than the pod has groups");
	n = report(pkt, LL, (struct rec[]){{5, OWN, 0, 1}}, 1, 0);
	expect(&t, &p.mld6, pkt, n, false, "a record with a source (16 chosen bytes)");
	n = report(pkt, LL, (struct rec[]){{4, OWN, 1, 0}}, 1, 0);
	expect(&t, &p.mld6, pkt, n, false, "a record with aux data");
	n = report(pkt, LL, (struct rec[]){R(4, OWN)}, 1, 1);
	expect(&t, &p.mld6, pkt, n, false, "a byte after the report");
	n = report(pkt, LL, (struct rec[]){R(4, OWN), R(4, OWNL)}, 2, 0);
	pkt[55] = 1; /* one record announced, two there */
	expect(&t, &p.mld6, pkt, n, false, "a record count short of the records");
	pkt[55] = 2;
	pkt[5] += 1; /* a payload length that is not the records' */
	expect(&t, &p.mld6, pkt, n + 1, false, "a payload length longer than the records");
	struct {
		uint32_t at;
		uint8_t v;
		const char *what;
	} bytes[] = {
		{1, 0x01, "a flow label"},
		{0, 0x6b, "a traffic class"},
		{7, 255, "hop limit 255"},
		{39, 0x01, "to all-nodes"},
		{45, 1, "a router-alert value of its own"},
		{47, 1, "a PadN of another length"},
		{49, 1, "ICMPv6 code 1"},
		{53, 1, "the reserved field set"},
	};
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		n = report(pkt, LL, (struct rec[]){R(4, OWN)}, 1, 0);
		pkt[bytes[i].at] = bytes[i].v;
		expect(&t, &p.mld6, pkt, n, false, bytes[i].what);
	}
	tables_free(&t);
	ng_policy_free(&p);
}

/* The shape: chains mld_report and mld_report_1..G, each record looked up
 * in the set at its offset, the rule from :: before the source check in
 * every table, none of it without groups. */
static void test_chains(void **state)
{
	(void)state;
	static const char *const groups[] = {OWN, OWNL, "ff02::1:ff00:6"};
	struct ng_policy p;
	struct tables t;
	struct ng_snapshot s = {.table = NG_TABLE};

	policy_with(&p, groups, 3);
	tables_render(&p, &t);
	assert_int_equal(ng_snapshot_from_batch(&s, &t.pod), 0);
	for (size_t i = 0; getenv("SHOW") && i < s.lines.n; i++)
		puts(s.lines.v[i]);
	struct table_rules *all[] = {&t.inet, &t.guard, &t.host};
	const char *base[] = {NG_CHAIN_EGRESS, NG_RAW_CHAIN_V6, NG_RAW_CHAIN_V6};
	for (int k = 0; k < 3; k++) {
		int chains[5] = {0}, from_any = -1, source = -1, normal = -1, at = 0;

		for (int i = 0; i < all[k]->n; i++) {
			const char *c = nftnl_rule_get_str(all[k]->v[i], NFTNL_RULE_CHAIN);
			uint32_t len = 0;
			const char *ud = nftnl_rule_get_data(all[k]->v[i], NFTNL_RULE_USERDATA, &len);

			if (!strcmp(c, NG_MLD_CHAIN))
				chains[0]++;
			for (int g = 1; g <= 4; g++) {
				char name[32];

				snprintf(name, sizeof(name), NG_MLD_CHAIN "_%d", g);
				chains[g] += !strcmp(c, name);
			}
			if (strcmp(c, base[k]) != 0)
				continue;
			if (strstr(ud + 2, "MLDv2 report from ::"))
				from_any = at;
			if (strstr(ud + 2, "only from the pod's own addresses") && strstr(ud + 2, "IPv6"))
				source = at;
			if (strstr(ud + 2, "MLDv2 report in the kernel's layout"))
				normal = at;
			at++;
		}
		/* mld_report: record 1; _1 and _2: the end and the next record;
		 * _3: the end only; no _4. */
		assert_int_equal(chains[0], 1);
		assert_int_equal(chains[1], 2);
		assert_int_equal(chains[2], 2);
		assert_int_equal(chains[3], 1);
		assert_int_equal(chains[4], 0);
		assert_true(from_any >= 0 && from_any < source && source < normal);
	}
	/* Record 3's group at 56 + 2 * 20 + 4; three records: 16 + 60 bytes
	 * of payload, 116 in meta len (inet). */
	bool rec3 = false, end3 = false;
	for (size_t i = 0; i < s.lines.n; i++) {
		rec3 |= strstr(s.lines.v[i],
			       "[ payload load 16b @ network header + 100 => reg 1 ] [ lookup reg 1 set "
			       "mld_v6 0x0 ] [ immediate reg 0 goto -> mld_report_3 ]") != NULL;
		end3 |= strstr(s.lines.v[i],
			       "[ payload load 2b @ network header + 54 => reg 1 ] [ cmp eq reg 1 "
			       "0x00000300 ] [ payload load 2b @ network header + 4 => reg 1 ] [ cmp eq "
			       "reg 1 0x00004c00 ] [ meta load len => reg 1 ] [ cmp eq reg 1 0x00000074 ] "
			       "[ immediate reg 0 accept ]") != NULL;
	}
	assert_true(rec3);
	assert_true(end3);
	ng_snapshot_free(&s);
	tables_free(&t);
	ng_policy_free(&p);

	/* No group (no IPv6 address, no MAC): no chain, no rule, no report. */
	policy_with(&p, NULL, 0);
	tables_render(&p, &t);
	for (int i = 0; i < t.inet.n; i++)
		assert_true(strstr(nftnl_rule_get_str(t.inet.v[i], NFTNL_RULE_CHAIN), "mld") == NULL);
	uint8_t pkt[1024];
	uint32_t n = report(pkt, LL, (struct rec[]){R(4, OWN)}, 1, 0);
	expect(&t, &p.mld6, pkt, n, false, "any report, with no group");
	tables_free(&t);
	ng_policy_free(&p);
}

/* Set mld_v6: raw 16-byte keys with nft's own userdata for `typeof
 * @nh,480,128` (key byte order big endian; typeof: payload expression,
 * description 0, type 0, base network header, offset 480, length 128), so
 * that `nft list` prints the typeof line and `nft -f` reads the rules back. */
static void test_set_typeof(void **state)
{
	(void)state;
	static const char *const groups[] = {OWN, OWNL};
	struct ng_policy p;
	struct tables t;
	struct ng_snapshot s = {.table = NG_TABLE};
	bool set = false, own = false;

	policy_with(&p, groups, 2);
	tables_render(&p, &t);
	assert_int_equal(ng_snapshot_from_batch(&s, &t.pod), 0);
	for (size_t i = 0; i < s.lines.n; i++) {
		set |= !strcmp(s.lines.v[i],
			       "set mld_v6 flags 0x2 keytype 4 keylen 16 concat [] size 2 userdata "
			       "000402000000032600040700000001"
			       "1e000400000000010400000000020402000000"
			       "0304e0010000040480000000");
		own |= !strcmp(s.lines.v[i], "set mld_v6 element ff0200000000000000000001ff000005 flags 0x0");
	}
	assert_true(set);
	assert_true(own);
	ng_snapshot_free(&s);
	tables_free(&t);
	ng_policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_reports),
		cmocka_unit_test(test_chosen_bytes_refused),
		cmocka_unit_test(test_chains),
		cmocka_unit_test(test_set_typeof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
