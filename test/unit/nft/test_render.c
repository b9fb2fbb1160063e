/* The rendered batch, read back the way libnftnl's own tests do: build,
 * serialise, parse the messages again, compare. No socket, no root. The
 * golden file pins the exact encoding that was checked against the kernel
 * and `nft list ruleset`; regenerate it with UPDATE_GOLDEN=1 after a
 * deliberate change, and review the diff. */
#include "render_fixtures.h"

#include <libnftnl/object.h>

#include "nft/render_log.h"

static void test_message_sequence(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};

	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 100, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);

	/* One transaction: BEGIN ... END around everything. */
	assert_int_equal(m.type[0], NFNL_MSG_BATCH_BEGIN);
	assert_int_equal(m.type[m.n - 1], NFNL_MSG_BATCH_END);
	/* Replace: create-if-missing, delete, create. */
	assert_int_equal(m.type[1], nft(NFT_MSG_NEWTABLE));
	assert_int_equal(m.type[2], nft(NFT_MSG_DELTABLE));
	assert_int_equal(m.type[3], nft(NFT_MSG_NEWTABLE));
	/* In each table, every set and element before the first rule
	 * (constant sets); the inet table first, then the netdev guard, each
	 * replaced the same way. */
	int first_netdev = -1;
	for (int f = 0; f < 2; f++) {
		uint8_t fam = f == 0 ? NFPROTO_INET : NFPROTO_NETDEV;
		int first_rule = -1, last_set = -1;

		for (int i = 0; i < m.n; i++) {
			if (m.family[i] != fam)
				continue;
			if (f == 1 && first_netdev < 0)
				first_netdev = i;
			if (m.type[i] == nft(NFT_MSG_NEWRULE) && first_rule < 0)
				first_rule = i;
			if (m.type[i] == nft(NFT_MSG_NEWSET) || m.type[i] == nft(NFT_MSG_NEWSETELEM))
				last_set = i;
		}
		assert_true(first_rule > last_set && last_set > 0);
	}
	for (int i = 1; i < first_netdev; i++)
		assert_int_equal(m.family[i], NFPROTO_INET);
	assert_int_equal(m.type[first_netdev], nft(NFT_MSG_NEWTABLE));
	assert_int_equal(m.type[first_netdev + 1], nft(NFT_MSG_DELTABLE));
	assert_int_equal(m.type[first_netdev + 2], nft(NFT_MSG_NEWTABLE));
	/* Acked body messages are all but BEGIN and END. */
	assert_int_equal(ng_batch_count(&b), (uint32_t)(m.n - 2));
	assert_string_equal(ng_batch_describe(&b, 100), "batch begin");
	assert_contains(ng_batch_describe(&b, 101), "create if missing");
	assert_contains(ng_batch_describe(&b, 102), "remove the previous ruleset");
	assert_string_equal(ng_batch_describe(&b, 100 + (uint32_t)m.n - 1), "batch end");
	assert_string_equal(ng_batch_describe(&b, 99999), "unknown message");
	ng_batch_free(&b);
	ng_policy_free(&p);
}

/* Rule comments of one chain, in order, from the parsed-back batch. */

static void test_egress_order(void **state)
{
	(void)state;
	struct chain_rules c = {.chain = NG_CHAIN_EGRESS};
	static const char *const want[] = {
		"loopback",
		"only from the pod's own addresses (IPv4)",
		"neighbour discovery from ::",
		"MLDv2 report from ::",
		"only from the pod's own addresses, link-local included (IPv6)",
		"IPv6 routing header",
		"IPv4 loose source route",
		"IPv4 strict source route",
		"replies and related",
		"invalid",
		"cloud metadata (IPv4)",
		"cloud metadata (IPv6)",
		"NAT64 local-use /48",
		"NAT64 local-use /56",
		"NAT64 local-use /64",
		"NAT64 local-use /96",
		"6to4",
		"Teredo",
		"ISATAP",
		"DNS to dns.servers (IPv4)",
		"DNS to dns.servers (IPv6)",
		"egress.allow and pod grants (IPv4)",
		"egress.allow and pod grants (IPv6)",
		"DNS names resolved at ADD, for the pod's life (IPv4)",
		"DNS names resolved at ADD, for the pod's life (IPv6)",
		"IPv6 neighbour discovery",
		"MLDv2 report in the kernel's layout: its records in mld_report",
		"default deny",
	};

	render_chain(NG_DENY_REJECT, &c);
	assert_int_equal(c.n, 28);
	for (int i = 0; i < 28; i++)
		assert_contains(c.comments[i], want[i]);
	/* Sources: `ip saddr != @source_v4` (offset 12, inverted lookup), a
	 * drop that no reset or ICMP error follows to the claimed address. */
	assert_contains(c.exprs[1], "[ payload load 4b @ network header + 12 => reg 1 ] [ lookup reg 1 set "
				    "source_v4 0x1 ] [ immediate reg 0 jump -> refuse_source ]");
	assert_contains(c.exprs[2], "[ payload load 16b @ network header + 8 => reg 1 ] [ cmp eq reg 1 "
				    "0x00000000 0x00000000 0x00000000 0x00000000 ]");
	/* MLD reports from :: (the kernel's while its link-local address is
	 * tentative) go to the MLD chains before the source check refuses ::. */
	assert_contains(c.exprs[3], "[ payload load 16b @ network header + 8 => reg 1 ] [ cmp eq reg 1 "
				    "0x00000000 0x00000000 0x00000000 0x00000000 ]");
	assert_contains(c.exprs[3], "[ immediate reg 0 jump -> mld_report ]");
	assert_contains(c.exprs[4], "[ lookup reg 1 set source_v6 0x1 ]");
	/* The rest as before, four rules on. */
	memmove(c.exprs[1], c.exprs[5], sizeof(c.exprs[0]) * (28 - 5));
	/* Metadata: nfproto ipv4, ip daddr (offset 16, 4 bytes), set, jump. */
	assert_contains(c.exprs[6], "[ meta load nfproto => reg 1 ]");
	assert_contains(c.exprs[6], "[ cmp eq reg 1 0x00000002 ]");
	assert_contains(c.exprs[6], "[ payload load 4b @ network header + 16 => reg 1 ]");
	assert_contains(c.exprs[6], "[ lookup reg 1 set metadata_v4");
	assert_contains(c.exprs[6], "[ immediate reg 0 jump -> refuse_metadata ]");
	/* IPv6: nfproto 10, ip6 daddr at offset 24, 16 bytes. */
	assert_contains(c.exprs[7], "[ cmp eq reg 1 0x0000000a ]");
	assert_contains(c.exprs[7], "[ payload load 16b @ network header + 24 => reg 1 ]");
	/* The allow lookup concatenates daddr . l4proto . dport in registers
	 * 1, 9, 10 (one 4-byte word each). */
	assert_contains(c.exprs[17], "[ meta load l4proto => reg 9 ]");
	assert_contains(c.exprs[17], "[ payload load 2b @ transport header + 2 => reg 10 ]");
	assert_contains(c.exprs[17], "[ lookup reg 1 set allow_v4");
	/* For IPv6 the address takes four words; the next word starts a
	 * 16-byte register, which the kernel names reg 2; then reg 13. */
	assert_contains(c.exprs[18], "[ meta load l4proto => reg 2 ]");
	assert_contains(c.exprs[18], "[ payload load 2b @ transport header + 2 => reg 13 ]");
	assert_contains(c.exprs[23], "[ immediate reg 0 jump -> refuse_egress ]");
	/* MLD: the kernel's report header (to ff02::16, its hop-by-hop header
	 * and ICMPv6 type 143 in one compare), then its records in the MLD
	 * chains (test_render_mld.c). */
	assert_contains(c.exprs[22], "[ payload load 16b @ network header + 24 => reg 1 ] [ cmp eq reg 1 "
				     "0x000002ff 0x00000000 0x00000000 0x16000000 ]");
	assert_contains(c.exprs[22], "[ payload load 10b @ network header + 40 => reg 1 ] [ cmp eq reg 1 "
				     "0x0205003a 0x00010000 0x0000008f ]");
	assert_contains(c.exprs[22], "[ immediate reg 0 jump -> mld_report ]");
	/* Source routes before "established" (a connection may add one later). */
	assert_contains(c.exprs[1], "[ meta load nfproto => reg 1 ] [ cmp eq reg 1 0x0000000a ] [ exthdr "
				    "load ipv6 1b @ 43 + 0 present => reg 1 ] [ cmp eq reg 1 0x00000001 ] [ "
				    "immediate reg 0 jump -> refuse_egress ]");
	assert_contains(c.exprs[2], "[ exthdr load ipv4 1b @ 131 + 0 present => reg 1 ]");
	assert_contains(c.exprs[3], "[ exthdr load ipv4 1b @ 137 + 0 present => reg 1 ]");
	/* 6to4: ip6 daddr & ffff:ffff:ffff:: (2002 and the 4 IPv4 bytes). */
	assert_contains(c.exprs[12],
			"[ payload load 16b @ network header + 24 => reg 1 ] [ bitwise reg 1 = "
			"( reg 1 & 0xffffffff 0x0000ffff 0x00000000 0x00000000 ) ^ 0x00000000 "
			"0x00000000 0x00000000 0x00000000 ] [ lookup reg 1 set metadata_v6_embedded "
			"0x0 ] [ immediate reg 0 jump -> refuse_metadata ]");
	/* Names: the key must be in the pinned set AND in its _ttl twin. */
	assert_contains(c.exprs[19],
			"[ lookup reg 1 set names_v4 0x0 ] [ lookup reg 1 set names_v4_ttl 0x0 ]");
}

static void test_ingress_order(void **state)
{
	(void)state;
	struct chain_rules c = {.chain = NG_CHAIN_INGRESS};

	render_chain(NG_DENY_REJECT, &c);
	assert_int_equal(c.n, 12);
	assert_contains(c.comments[1], "IPv6 routing header");
	assert_contains(c.exprs[1], "jump -> refuse_ingress");
	assert_contains(c.comments[0], "loopback");
	assert_contains(c.exprs[0], "[ meta load iif => reg 1 ]");
	assert_contains(c.comments[6], "ingress.ports from ingress.sources (IPv4)");
	assert_contains(c.exprs[6], "[ cmp eq reg 1 0x00000006 ]");                        /* TCP only */
	assert_contains(c.exprs[6], "[ payload load 4b @ network header + 12 => reg 1 ]"); /* saddr */
	assert_contains(c.comments[8], "kubelet probes (IPv4)");
	assert_contains(c.comments[10], "neighbour solicitation");
	assert_contains(c.exprs[10], "[ payload load 1b @ network header + 7 => reg 1 ]"); /* hop limit */
	assert_contains(c.exprs[10], "[ cmp eq reg 1 0x000000ff ]");
	assert_contains(c.comments[11], "default deny");
	assert_contains(c.exprs[11], "[ immediate reg 0 jump -> refuse_ingress ]");
}

/* The objects of type `type` named in batch b, family `fam`: "name rate/unit burst flags". */
struct objs {
	uint8_t family;
	char line[8][128];
	int n;
};

static int objs_cb(const struct nlmsghdr *nlh, void *data)
{
	struct objs *o = data;
	struct nftnl_obj *obj;

	if (nlh->nlmsg_type != nft(NFT_MSG_NEWOBJ) || fam_of(nlh) != o->family || o->n >= 8)
		return 0;
	obj = nftnl_obj_alloc();
	assert_int_equal(nftnl_obj_nlmsg_parse(nlh, obj), 0);
	if (nftnl_obj_get_u32(obj, NFTNL_OBJ_TYPE) == NFT_OBJECT_LIMIT)
		snprintf(o->line[o->n++], 128, "limit %s %llu/%llu burst %u type %u flags %u",
			 nftnl_obj_get_str(obj, NFTNL_OBJ_NAME),
			 (unsigned long long)nftnl_obj_get_u64(obj, NFTNL_OBJ_LIMIT_RATE),
			 (unsigned long long)nftnl_obj_get_u64(obj, NFTNL_OBJ_LIMIT_UNIT),
			 nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_BURST),
			 nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_TYPE),
			 nftnl_obj_get_u32(obj, NFTNL_OBJ_LIMIT_FLAGS));
	else
		snprintf(o->line[o->n++], 128, "counter %s", nftnl_obj_get_str(obj, NFTNL_OBJ_NAME));
	nftnl_obj_free(obj);
	return 0;
}

static bool has_line(const struct objs *o, const char *want)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->line[i], want))
			return true;
	return false;
}

/* Logging (on by default): each refuse chain counts, jumps to its log
 * chain, then gives its verdict; the log chain returns what is over the
 * table's one limit (counted in log_skipped) and logs the rest. */
static void test_logging_rules(void **state)
{
	(void)state;
	struct chain_rules c = {.chain = NG_CHAIN_REFUSE_INGRESS}, m = {.chain = NG_CHAIN_REFUSE_METADATA},
			   lc = {.chain = "log_ingress"}, lm = {.chain = "log_metadata"},
			   raw = {.chain = NG_RAW_CHAIN_REFUSE, .family = NFPROTO_NETDEV},
			   lraw = {.chain = "log_raw", .family = NFPROTO_NETDEV};
	struct chain_rules *all[] = {&c, &m, &lc, &lm, &raw, &lraw};
	struct objs inet = {.family = NFPROTO_INET}, guard = {.family = NFPROTO_NETDEV};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	char comment[256];

	sample_policy(&p, NG_DENY_REJECT);
	p.nflog = true;
	p.nflog_group = 5;
	p.log_rate = 10;
	p.log_burst = 20;
	snprintf(p.pod, sizeof(p.pod), "sandboxes/p1");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_equal(ng_batch_walk(&b, rules_cb, all[i]), 0);
	assert_int_equal(ng_batch_walk(&b, objs_cb, &inet), 0);
	assert_int_equal(ng_batch_walk(&b, objs_cb, &guard), 0);
	/* libnftnl puts an objref's name without its NUL: one of 4k bytes
	 * would read back (CHECK's side) into the next attribute. */
	assert_int_not_equal(strlen(NG_LOG_LIMIT) % 4, 0);
	assert_int_not_equal(strlen(ng_log_skipped_counter(NG_LOG_POD)) % 4, 0);
	assert_int_not_equal(strlen(ng_log_skipped_counter(NG_LOG_GUARD)) % 4, 0);
	assert_int_not_equal(strlen(ng_log_skipped_counter(NG_LOG_NODE)) % 4, 0);
	/* One limit per table, "over" (NFT_LIMIT_F_INV), and its counter. */
	assert_true(has_line(&inet, "limit log_limit 10/1 burst 20 type 0 flags 1"));
	assert_true(has_line(&inet, "counter log_skipped"));
	assert_true(has_line(&guard, "limit log_limit 10/1 burst 20 type 0 flags 1"));
	assert_true(has_line(&guard, "counter raw_log_skipped"));
	/* count, jump to the log chain, the verdict */
	assert_int_equal(c.n, 3);
	assert_contains(c.exprs[1], "jump -> log_ingress");
	assert_contains(c.comments[1], "at most 10/s (burst 20) per table");
	assert_contains(c.exprs[2], "[ immediate reg 0 drop ]");
	assert_int_equal(m.n, 4);
	assert_contains(m.exprs[1], "jump -> log_metadata");
	/* over the limit: counted and back; else logged, naming category and pod */
	assert_int_equal(lc.n, 2);
	assert_contains(lc.exprs[0], "[ objref type 4 name log_limit");
	assert_contains(lc.exprs[0], "[ objref type 1 name log_skipped");
	assert_contains(lc.exprs[0], "return");
	assert_contains(lc.comments[0], "counted in log_skipped, not logged");
	assert_contains(lc.exprs[1], "[ log prefix netguard ingress sandboxes/p1:");
	assert_contains(lc.exprs[1], "group 5");
	assert_int_equal(lm.n, 2);
	assert_contains(lm.exprs[1], "log prefix netguard metadata sandboxes/p1:");
	assert_int_equal(raw.n, 3);
	assert_contains(raw.exprs[1], "jump -> log_raw");
	assert_int_equal(lraw.n, 2);
	assert_contains(lraw.exprs[0], "name raw_log_skipped");
	assert_contains(lraw.exprs[1], "log prefix netguard raw sandboxes/p1:");
	/* The comment observe prints is the verdict rule's, by construction. */
	ng_refuse_comment(NG_LOG_POD, "ingress", false, p.deny, IPPROTO_TCP, comment, sizeof(comment));
	assert_string_equal(comment, c.comments[2]);
	ng_refuse_comment(NG_LOG_POD, "metadata", false, p.deny, IPPROTO_TCP, comment, sizeof(comment));
	assert_string_equal(comment, m.comments[2]);
	ng_refuse_comment(NG_LOG_POD, "metadata", false, p.deny, IPPROTO_UDP, comment, sizeof(comment));
	assert_string_equal(comment, m.comments[3]);
	ng_refuse_comment(NG_LOG_GUARD, "raw", false, p.deny, IPPROTO_UDP, comment, sizeof(comment));
	assert_string_equal(comment, raw.comments[2]);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

/* "log": false renders no log chain, limit or skipped counter. */
static void test_logging_off(void **state)
{
	(void)state;
	struct chain_rules eg = {.chain = NG_CHAIN_REFUSE_EGRESS}, lg = {.chain = "log_egress"};
	struct objs inet = {.family = NFPROTO_INET};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, &eg), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, &lg), 0);
	assert_int_equal(ng_batch_walk(&b, objs_cb, &inet), 0);
	assert_int_equal(eg.n, 3);
	assert_int_equal(lg.n, 0);
	for (int i = 0; i < inet.n; i++)
		assert_null(strstr(inet.line[i], "log_"));
	ng_batch_free(&b);
	ng_policy_free(&p);
}

static void test_deny_actions(void **state)
{
	(void)state;
	struct chain_rules rej = {.chain = NG_CHAIN_REFUSE_EGRESS}, drop = {.chain = NG_CHAIN_REFUSE_EGRESS};
	struct chain_rules meta = {.chain = NG_CHAIN_REFUSE_METADATA};

	render_chain(NG_DENY_REJECT, &rej);
	assert_int_equal(rej.n, 3);
	assert_contains(rej.exprs[0], "name egress_denied");
	assert_contains(rej.exprs[1], "[ reject type 1 code 0 ]"); /* TCP reset */
	assert_contains(rej.exprs[2], "[ reject type 2 code 3 ]"); /* icmpx admin-prohibited */
	render_chain(NG_DENY_DROP, &drop);
	assert_int_equal(drop.n, 2);
	assert_contains(drop.exprs[0], "name egress_denied");
	assert_contains(drop.exprs[1], "[ immediate reg 0 drop ]");
	/* Metadata is rejected even when the general action is drop. */
	render_chain(NG_DENY_DROP, &meta);
	assert_int_equal(meta.n, 3);
	assert_contains(meta.exprs[1], "[ reject type 1 code 0 ]");
}

/* Audit (enforce.auditNamespaces): every refuse chain counts into a
 * *_would_deny counter, logs "would_deny" and accepts, in the inet table
 * and in the guard; cloud metadata is refused as in enforce mode, there
 * through refuse_metadata, in the guard through refuse_raw_metadata. */
static void test_audit(void **state)
{
	(void)state;
	struct chain_rules eg = {.chain = NG_CHAIN_REFUSE_EGRESS}, in = {.chain = NG_CHAIN_REFUSE_INGRESS},
			   src = {.chain = NG_CHAIN_REFUSE_SOURCE},
			   meta = {.chain = NG_CHAIN_REFUSE_METADATA},
			   raw = {.chain = NG_RAW_CHAIN_REFUSE, .family = NFPROTO_NETDEV},
			   rawmeta = {.chain = NG_RAW_CHAIN_REFUSE "_metadata", .family = NFPROTO_NETDEV},
			   raw4 = {.chain = NG_RAW_CHAIN_V4, .family = NFPROTO_NETDEV};
	struct chain_rules *all[] = {&eg, &in, &src, &meta, &raw, &rawmeta, &raw4};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, NG_DENY_REJECT);
	p.audit = true;
	p.nflog = true;
	p.nflog_group = 5;
	snprintf(p.pod, sizeof(p.pod), "staging/p1");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		assert_int_equal(ng_batch_walk(&b, rules_cb, all[i]), 0);
	struct chain_rules *let[] = {&eg, &in, &src, &raw};
	const char *counters[] = {"egress_would_deny", "ingress_would_deny", "source_would_deny",
				  "raw_would_deny"};
	const char *cats[] = {"egress", "ingress", "source", "raw"};
	for (size_t i = 0; i < 4; i++) {
		char log_chain[64], comment[256];
		struct chain_rules lg = {.family = let[i]->family};

		assert_int_equal(let[i]->n, 3);
		assert_contains(let[i]->exprs[0], counters[i]);
		ng_log_chain_name(let[i]->chain, log_chain, sizeof(log_chain));
		assert_contains(let[i]->exprs[1], log_chain);
		lg.chain = log_chain;
		assert_int_equal(ng_batch_walk(&b, rules_cb, &lg), 0);
		assert_int_equal(lg.n, 2);
		assert_contains(lg.exprs[1], "log prefix netguard would_deny ");
		assert_contains(let[i]->exprs[2], "[ immediate reg 0 accept ]");
		assert_contains(let[i]->comments[2], "AUDIT");
		ng_refuse_comment(i == 3 ? NG_LOG_GUARD : NG_LOG_POD, cats[i], true, p.deny, IPPROTO_TCP,
				  comment, sizeof(comment));
		assert_string_equal(comment, let[i]->comments[2]);
	}
	/* Metadata: counted as denied and refused, in both tables. */
	assert_contains(meta.exprs[0], "name metadata_denied");
	assert_contains(meta.exprs[2], "[ reject type 1 code 0 ]");
	assert_int_equal(rawmeta.n, 3);
	assert_contains(rawmeta.exprs[0], "name raw_denied");
	assert_contains(rawmeta.exprs[2], "[ immediate reg 0 drop ]");
	/* The guard's metadata rule jumps to the chain that still drops. */
	bool jumps = false;
	for (int i = 0; i < raw4.n; i++)
		if (strstr(raw4.comments[i], "cloud metadata"))
			jumps = strstr(raw4.exprs[i], "jump -> refuse_raw_metadata ]") != NULL;
	assert_true(jumps);
	ng_batch_free(&b);
	ng_policy_free(&p);

	/* Not audited: no would_deny anywhere, no extra chain. */
	struct chain_rules plain = {.chain = NG_RAW_CHAIN_REFUSE "_metadata", .family = NFPROTO_NETDEV};
	render_chain(NG_DENY_REJECT, &plain);
	assert_int_equal(plain.n, 0);
}

static void test_create_batch(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};

	/* The first ADD of a pod: an exclusive create, no delete (a delete
	 * makes the kernel wait out an RCU grace period when the socket closes). */
	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	assert_int_equal(m.type[1], nft(NFT_MSG_NEWTABLE));
	for (int i = 0; i < m.n; i++)
		assert_int_not_equal(m.type[i], nft(NFT_MSG_DELTABLE));
	assert_contains(ng_batch_describe(&b, 2), "(create)");
	/* The same table as the replace form leaves behind. */
	struct ng_snapshot a = {0}, r = {0};
	struct ng_batch b2;
	assert_int_equal(ng_snapshot_from_batch(&a, &b), 0);
	assert_int_equal(ng_batch_init(&b2, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b2, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&r, &b2), 0);
	assert_int_equal(ng_snapshot_diff(&r, &a, &err), 0);
	ng_snapshot_free(&a);
	ng_snapshot_free(&r);
	ng_batch_free(&b2);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

static void test_message_bound(void **state)
{
	(void)state;
	struct ng_batch b;
	struct ng_err err = {0};
	static char big[NG_BATCH_MSG_MAX];
	struct nlmsghdr *nlh;

	/* A message that outgrows the size it was cleared for fails the batch
	 * instead of carrying uncleared bytes to the kernel. */
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	nlh = ng_batch_msg(&b, NFT_MSG_NEWTABLE, 0, "too big");
	mnl_attr_put(nlh, NFTA_TABLE_USERDATA, sizeof(big), big);
	ng_batch_commit_msg(&b);
	assert_int_equal(ng_batch_finish(&b, &err), -1);
	assert_int_equal(err.code, NG_E_INTERNAL);
	assert_contains(err.msg, "outgrew");
	ng_batch_free(&b);
}

static void test_delete_batch(void **state)
{
	(void)state;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};

	assert_int_equal(ng_batch_init(&b, NG_TABLE, 7, &err), 0);
	assert_int_equal(ng_render_delete(&b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	/* Both tables, each created if missing and deleted: no "get, then
	 * delete" race, and DEL removes a guard whatever the config says now. */
	assert_int_equal(m.n, 6);
	for (int f = 0; f < 2; f++) {
		assert_int_equal(m.type[1 + 2 * f], nft(NFT_MSG_NEWTABLE));
		assert_int_equal(m.type[2 + 2 * f], nft(NFT_MSG_DELTABLE));
		assert_int_equal(m.family[1 + 2 * f], f == 0 ? NFPROTO_INET : NFPROTO_NETDEV);
		assert_int_equal(m.family[2 + 2 * f], f == 0 ? NFPROTO_INET : NFPROTO_NETDEV);
	}
	ng_batch_free(&b);
}

static void test_large_set_splits(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};
	int elem_msgs = 0;

	sample_policy(&p, NG_DENY_REJECT);
	for (int i = 0; i < 2000; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "10.%d.%d.1", 100 + i / 250, i % 250);
		add_elem(&p.allow[0], ip, ip, 6, 443, 443, 0);
	}
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	for (int i = 0; i < m.n; i++)
		elem_msgs += m.type[i] == nft(NFT_MSG_NEWSETELEM);
	/* 2001 allow elements in chunks of 256 (an element list is one 16-bit
	 * netlink attribute), plus one message per other non-empty set
	 * (metadata x2, dns, allow_v6, names and names_ttl, nd, ingress, node,
	 * mld); the netdev guard has the same. */
	assert_int_equal(elem_msgs, (8 + 10) + (8 + 10));
	struct ng_snapshot s = {0};
	assert_int_equal(ng_snapshot_from_batch(&s, &b), 0);
	int n = 0;
	for (size_t i = 0; i < s.lines.n; i++)
		n += strncmp(s.lines.v[i], "set allow_v4 element", 20) == 0;
	assert_int_equal(n, 2001);
	ng_snapshot_free(&s);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

/* egress.names "learn": the egress chain hands every query to a resolver
 * to the agent, after the source checks and before "established" (a
 * socket's second query is established), not invalid packets. */
static void test_learn_queues_queries(void **state)
{
	(void)state;
	for (int learn = 0; learn < 2; learn++) {
		struct chain_rules c = {.chain = NG_CHAIN_EGRESS};
		struct ng_policy p;
		struct ng_batch b;
		struct ng_err err = {0};
		int at = -1, est = -1, srcroute = -1;

		sample_policy(&p, NG_DENY_REJECT);
		p.learn = learn;
		assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
		assert_int_equal(ng_render_replace(&p, &b, &err), 0);
		assert_int_equal(ng_batch_walk(&b, rules_cb, &c), 0);
		for (int i = 0; i < c.n; i++) {
			if (strstr(c.comments[i], "queries to dns.servers, to the agent (IPv4)"))
				at = i;
			if (strstr(c.comments[i], "replies and related"))
				est = i;
			if (strstr(c.comments[i], "IPv4 strict source route"))
				srcroute = i;
		}
		if (!learn) {
			assert_int_equal(at, -1);
		} else {
			assert_int_equal(at, srcroute + 2);
			/* ICMP errors about flows from port 53 (the agent's answers) first. */
			assert_contains(c.comments[at - 1], "ICMP errors about the agent's answers");
			assert_contains(c.exprs[at - 1], "[ ct load proto_src => reg 1 , dir original ]");
			assert_contains(c.exprs[at - 1], "[ cmp eq reg 1 0x00003500 ]");
			assert_contains(c.exprs[at - 1], "[ immediate reg 0 drop ]");
			assert_int_equal(est, at + 2);
			assert_contains(c.comments[at + 1], "queries to dns.servers, to the agent (IPv6)");
			assert_contains(c.exprs[at], "[ ct load state => reg 1 ]");
			assert_contains(c.exprs[at], "[ payload load 2b @ transport header + 2 => reg 10 ]");
			assert_contains(c.exprs[at], "[ lookup reg 1 set dns_v4");
			assert_contains(c.exprs[at], "[ target name NFQUEUE rev 3 ]");
		}
		ng_batch_free(&b);
		ng_policy_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_sequence),
		cmocka_unit_test(test_egress_order),
		cmocka_unit_test(test_ingress_order),
		cmocka_unit_test(test_logging_rules),
		cmocka_unit_test(test_logging_off),
		cmocka_unit_test(test_deny_actions),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_create_batch),
		cmocka_unit_test(test_message_bound),
		cmocka_unit_test(test_delete_batch),
		cmocka_unit_test(test_large_set_splits),
		cmocka_unit_test(test_learn_queues_queries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
