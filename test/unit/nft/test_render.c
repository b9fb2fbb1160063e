/* The rendered batch, read back the way libnftnl's own tests do: build,
 * serialise, parse the messages again, compare. No socket, no root. The
 * golden file pins the exact encoding that was checked against the kernel
 * and `nft list ruleset`; regenerate it with UPDATE_GOLDEN=1 after a
 * deliberate change, and review the diff. */
#include "testutil.h"

#include "policy/metadata.h"

#include <libgen.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "nft/batch.h"
#include "nft/render.h"
#include "nft/snapdiff.h"
#include "nft/snapnames.h"
#include "nft/snapshot.h"

static void add_ip(ng_ip_vec *v, const char *s)
{
	struct ng_ip ip;

	assert_int_equal(ng_ip_parse(s, &ip), 0);
	assert_int_equal(ng_vec_push(v, &ip), 0);
}

static void add_elem(ng_elem_vec *v, const char *lo, const char *hi, uint8_t proto, uint16_t plo,
		     uint16_t phi, uint32_t timeout)
{
	struct ng_elem e = {.proto = proto, .p_lo = plo, .p_hi = phi, .timeout = timeout};

	assert_int_equal(ng_ip_parse(lo, &e.lo), 0);
	assert_int_equal(ng_ip_parse(hi, &e.hi), 0);
	assert_int_equal(ng_vec_push(v, &e), 0);
}

/* A small policy touching every set. */
static void sample_policy(struct ng_policy *p, enum ng_deny_action deny)
{
	memset(p, 0, sizeof(*p));
	p->deny = deny;
	snprintf(p->comment, sizeof(p->comment), "test pod");
	add_ip(&p->metadata[0], "169.254.169.254");
	add_ip(&p->metadata[1], "fd00:ec2::254");
	add_elem(&p->dns[0], "10.96.0.10", "10.96.0.10", 17, 53, 53, 0);
	add_elem(&p->dns[0], "10.96.0.10", "10.96.0.10", 6, 53, 53, 0);
	add_elem(&p->allow[0], "10.20.0.0", "10.20.255.255", 6, 443, 443, 0);
	add_elem(&p->allow[1], "fd00:20::", "fd00:20::ffff:ffff:ffff:ffff", 17, 5000, 5010, 0);
	add_elem(&p->names[0], "10.50.0.1", "10.50.0.1", 6, 443, 443, 3600);
	p->names_at = 1796000000; /* a fixed "now", for the expiry comments */
	add_elem(&p->nd6, "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0, 135, 136, 0);
	add_elem(&p->ingress[0], "10.244.0.0", "10.244.255.255", 0, 8080, 8080, 0);
	add_ip(&p->node[0], "10.244.1.1");
	add_ip(&p->pod4, "10.244.1.5");
	add_ip(&p->mld6, "ff02::1:ff00:5");
	p->raw_guard = true;
	snprintf(p->ifname, sizeof(p->ifname), "eth0");
}

struct msgs {
	uint16_t type[256];
	uint8_t family[256];
	int n;
};

/* The nf_tables family a message is about (BEGIN/END: AF_UNSPEC). */
static uint8_t fam_of(const struct nlmsghdr *nlh)
{
	return ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

static int collect(const struct nlmsghdr *nlh, void *data)
{
	struct msgs *m = data;

	if (m->n < 256) {
		m->family[m->n] = fam_of(nlh);
		m->type[m->n++] = nlh->nlmsg_type;
	}
	return 0;
}

static uint16_t nft(uint16_t t)
{
	return (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | t);
}

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
struct chain_rules {
	const char *chain;
	uint8_t family; /* 0: inet */
	char comments[32][128];
	char exprs[32][2048];
	int n;
};

static int expr_cb(struct nftnl_expr *e, void *data)
{
	char *buf = data, one[512];

	nftnl_expr_snprintf(one, sizeof(one), e, NFTNL_OUTPUT_DEFAULT, 0);
	strncat(buf, "[ ", 2047 - strlen(buf));
	strncat(buf, nftnl_expr_get_str(e, NFTNL_EXPR_NAME), 2047 - strlen(buf));
	strncat(buf, " ", 2047 - strlen(buf));
	strncat(buf, one, 2047 - strlen(buf));
	strncat(buf, "] ", 2047 - strlen(buf));
	return 0;
}

static int rules_cb(const struct nlmsghdr *nlh, void *data)
{
	struct chain_rules *c = data;
	struct nftnl_rule *r;
	uint32_t len = 0;
	const uint8_t *ud;

	if (nlh->nlmsg_type != nft(NFT_MSG_NEWRULE) || fam_of(nlh) != (c->family ? c->family : NFPROTO_INET))
		return 0;
	r = nftnl_rule_alloc();
	assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
	if (!strcmp(nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), c->chain) && c->n < 32) {
		ud = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len);
		/* userdata: type 0 (comment), length, NUL-terminated text */
		assert_true(len > 2 && ud[0] == 0);
		snprintf(c->comments[c->n], 128, "%s", (const char *)ud + 2);
		c->exprs[c->n][0] = '\0';
		nftnl_expr_foreach(r, expr_cb, c->exprs[c->n]);
		c->n++;
	}
	nftnl_rule_free(r);
	return 0;
}

static void render_chain(enum ng_deny_action deny, struct chain_rules *c)
{
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, deny);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, c), 0);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

/* The packet-socket guard: a netdev egress chain on the pod's interface
 * that lets a frame out only when the frame's own EtherType and the
 * kernel's parse agree, then refuses the metadata endpoints first (as the
 * policy table does, so no allow set can reach them), then lets out only
 * the egress sets and replies that never carry a bare SYN. */
static void test_raw_guard(void **state)
{
	(void)state;
	struct chain_rules eg = {.chain = NG_RAW_CHAIN_EGRESS, .family = NFPROTO_NETDEV},
			   v4 = {.chain = NG_RAW_CHAIN_V4, .family = NFPROTO_NETDEV},
			   v6 = {.chain = NG_RAW_CHAIN_V6, .family = NFPROTO_NETDEV};
	static const char *const want_eg[] = {"ARP request or reply from the pod's 10.244.1.5", "IPv4",
					      "IPv6", "default deny"};
	static const char *const want_v4[] = {"IPv4 options (source routes among them)",
					      "only from the pod's own addresses",
					      "cloud metadata",
					      "DNS",
					      "egress.allow",
					      "DNS names",
					      "replies from ingress.ports",
					      "TCP to the node",
					      "default deny"};
	struct ng_snapshot raw = {.table = NG_TABLE, .family = NFPROTO_NETDEV};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};

	render_chain(NG_DENY_REJECT, &eg);
	render_chain(NG_DENY_REJECT, &v4);
	render_chain(NG_DENY_REJECT, &v6);
	assert_int_equal(eg.n, 4);
	for (int i = 0; i < 4; i++)
		assert_contains(eg.comments[i], want_eg[i]);
	/* ARP: Ethernet/IPv4 sizes, operation 1-2, sender = the pod, < 64 bytes. */
	assert_contains(eg.exprs[0],
			"[ payload load 6b @ network header + 0 => reg 1 ] [ cmp eq reg 1 0x00080100 "
			"0x00000406 ]");
	assert_contains(eg.exprs[0], "[ cmp gte reg 1 0x00000100 ] [ cmp lte reg 1 0x00000200 ]");
	assert_contains(eg.exprs[0],
			"[ payload load 4b @ network header + 14 => reg 1 ] [ cmp eq reg 1 0x0501f40a ]");
	assert_contains(eg.exprs[0], "[ meta load len => reg 1 ] [ bitwise reg 1 = ( reg 1 & 0xffffffc0 ) ^ "
				     "0x00000000 ] [ cmp eq reg 1 0x00000000 ]");
	/* ether type at link-layer offset 12, and meta protocol, both 0x0800. */
	assert_contains(eg.exprs[1],
			"[ payload load 2b @ link header + 12 => reg 1 ] [ cmp eq reg 1 0x00000008 ]");
	assert_contains(eg.exprs[1], "[ meta load protocol => reg 1 ] [ cmp eq reg 1 0x00000008 ]");
	assert_contains(eg.exprs[1], "jump -> raw_v4");
	assert_contains(eg.exprs[2], "0x0000dd86");
	assert_int_equal(v4.n, 9);
	for (int i = 0; i < 9; i++)
		assert_contains(v4.comments[i], want_v4[i]);
	/* Source routes first (issue 13), then the pod's own sources, then
	 * metadata: daddr in the metadata set jumps to the refusal. */
	assert_contains(v4.exprs[0], "[ payload load 1b @ network header + 0 => reg 1 ] [ bitwise reg 1 = ( "
				     "reg 1 & 0x0000000f ) ^ 0x00000000 ] [ cmp neq reg 1 0x00000005 ] [ "
				     "immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.exprs[0], "[ exthdr load ipv6 1b @ 43 + 0 present => reg 1 ]");
	assert_contains(v4.exprs[2], "[ payload load 4b @ network header + 16 => reg 1 ] [ lookup reg 1 set "
				     "metadata_v4 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.exprs[3],
			"[ lookup reg 1 set metadata_v6 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	/* The IPv6 forms with free bits, in the guard too. */
	for (int i = 4; i < 4 + NG_V6_FORMS; i++)
		assert_contains(v6.exprs[i],
				"set metadata_v6_embedded 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	for (int i = 3; i < v4.n; i++)
		assert_true(strstr(v4.exprs[i], "metadata") == NULL);
	/* Replies: tcp flags & (syn|ack) != syn, then daddr . sport. */
	assert_contains(v4.exprs[6],
			"[ payload load 1b @ transport header + 13 => reg 1 ] [ bitwise reg 1 = ( reg 1 "
			"& 0x00000012 ) ^ 0x00000000 ] [ cmp neq reg 1 0x00000002 ]");
	assert_contains(v4.exprs[6], "[ payload load 2b @ transport header + 0 => reg 9 ]");
	assert_contains(v4.exprs[7], "[ cmp neq reg 1 0x00000002 ]");
	/* The pod's own sources in each family chain, and :: only for ND. */
	assert_contains(v4.exprs[1],
			"[ lookup reg 1 set source_v4 0x1 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.comments[1], "from ::");
	assert_contains(v6.exprs[2],
			"[ lookup reg 1 set source_v6 0x1 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_int_equal(v6.n, 10 + 1 + NG_V6_FORMS + 1);
	/* MLD in the guard: meta len counts the Ethernet header (14 + 76). */
	assert_contains(v6.exprs[9 + 1 + NG_V6_FORMS],
			"[ meta load len => reg 1 ] [ cmp eq reg 1 0x0000005a ]");
	assert_contains(v6.comments[8 + 1 + NG_V6_FORMS], "neighbour discovery");

	/* The base chain: netdev egress hook on CNI_IFNAME, policy drop. */
	sample_policy(&p, NG_DENY_REJECT);
	snprintf(p.ifname, sizeof(p.ifname), "net1");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &b, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	bool base = false;
	for (size_t i = 0; i < raw.lines.n; i++)
		base |= strcmp(raw.lines.v[i],
			       "chain egress hook 1 priority 0 policy 0 type filter device net1 "
			       "flags 0x0") == 0;
	assert_true(base);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);

	/* Off: the create form has no netdev message at all; the replace
	 * form removes a guard left from before. */
	p.raw_guard = false;
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	for (int i = 0; i < m.n; i++)
		assert_int_not_equal(m.family[i], NFPROTO_NETDEV);
	ng_batch_free(&b);
	memset(&m, 0, sizeof(m));
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	int netdev = 0;
	for (int i = 0; i < m.n; i++)
		netdev += m.family[i] == NFPROTO_NETDEV;
	assert_int_equal(netdev, 2); /* create if missing, delete */
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	assert_int_equal(raw.lines.n, 0);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

static void test_egress_order(void **state)
{
	(void)state;
	struct chain_rules c = {.chain = NG_CHAIN_EGRESS};
	static const char *const want[] = {
		"loopback",
		"only from the pod's own addresses (IPv4)",
		"neighbour discovery and MLD from ::",
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
		"MLDv2 report of the pod's solicited-node group ff02::1:ff00:5",
		"default deny",
	};

	render_chain(NG_DENY_REJECT, &c);
	assert_int_equal(c.n, 27);
	for (int i = 0; i < 27; i++)
		assert_contains(c.comments[i], want[i]);
	/* Sources: `ip saddr != @source_v4` (offset 12, inverted lookup), a
	 * drop that no reset or ICMP error follows to the claimed address. */
	assert_contains(c.exprs[1], "[ payload load 4b @ network header + 12 => reg 1 ] [ lookup reg 1 set "
				    "source_v4 0x1 ] [ immediate reg 0 jump -> refuse_source ]");
	assert_contains(c.exprs[2], "[ payload load 16b @ network header + 8 => reg 1 ] [ cmp eq reg 1 "
				    "0x00000000 0x00000000 0x00000000 0x00000000 ]");
	assert_contains(c.exprs[3], "[ lookup reg 1 set source_v6 0x1 ]");
	/* The rest as before, three rules on. */
	memmove(c.exprs[1], c.exprs[4], sizeof(c.exprs[0]) * (27 - 4));
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
	/* MLD (issue 13): the kernel's exact report, its group in mld_v6. */
	assert_contains(c.exprs[22], "[ payload load 16b @ network header + 24 => reg 1 ] [ cmp eq reg 1 "
				     "0x000002ff 0x00000000 0x00000000 0x16000000 ]");
	assert_contains(c.exprs[22], "[ payload load 8b @ network header + 40 => reg 1 ] [ cmp eq reg 1 "
				     "0x0205003a 0x00010000 ]");
	assert_contains(c.exprs[22], "[ meta load len => reg 1 ] [ cmp eq reg 1 0x0000004c ]");
	assert_contains(c.exprs[22],
			"[ payload load 16b @ network header + 60 => reg 1 ] [ cmp eq reg 1 "
			"0x000002ff 0x00000000 0x01000000 0x050000ff ] [ immediate reg 0 accept ]");
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

static void test_logging_rules(void **state)
{
	(void)state;
	struct chain_rules c = {.chain = NG_CHAIN_REFUSE_INGRESS}, m = {.chain = NG_CHAIN_REFUSE_METADATA};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, NG_DENY_REJECT);
	p.nflog = true;
	p.nflog_group = 5;
	p.log_rate = 10;
	p.log_burst = 20;
	snprintf(p.pod, sizeof(p.pod), "sandboxes/p1");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, &c), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, &m), 0);
	/* count, then a rate-limited log naming the pod, then the verdict */
	assert_int_equal(c.n, 3);
	assert_contains(c.exprs[1], "[ limit rate 10/second burst 20 type packets");
	assert_contains(c.exprs[1], "[ log prefix netguard ingress sandboxes/p1:");
	assert_contains(c.exprs[1], "group 5");
	assert_contains(c.comments[1], "at most 10/s (burst 20)");
	assert_contains(c.exprs[2], "[ immediate reg 0 drop ]");
	assert_int_equal(m.n, 4);
	assert_contains(m.exprs[1], "log prefix netguard metadata sandboxes/p1:");
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

struct elems {
	const char *set;
	char keys[16][200];
	int n;
	uint32_t flags;
	uint64_t timeout[16];
	char comment[16][64];
};

static int hex(char *out, const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	return (int)(2 * len);
}

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct elems *e = data;
	struct nftnl_set *s;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *el;

	if (fam_of(nlh) != NFPROTO_INET)
		return 0; /* the netdev guard's copies: test_raw_guard */
	if (nlh->nlmsg_type == nft(NFT_MSG_NEWSET)) {
		s = nftnl_set_alloc();
		assert_int_equal(nftnl_set_nlmsg_parse(nlh, s), 0);
		if (!strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), e->set))
			e->flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
		nftnl_set_free(s);
		return 0;
	}
	if (nlh->nlmsg_type != nft(NFT_MSG_NEWSETELEM))
		return 0;
	s = nftnl_set_alloc();
	assert_int_equal(nftnl_set_elems_nlmsg_parse(nlh, s), 0);
	if (strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), e->set)) {
		nftnl_set_free(s);
		return 0;
	}
	it = nftnl_set_elems_iter_create(s);
	while ((el = nftnl_set_elems_iter_next(it)) && e->n < 16) {
		uint32_t kl = 0, el_len = 0;
		const uint8_t *k = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY, &kl);
		const uint8_t *ke = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY_END, &el_len);
		int o = hex(e->keys[e->n], k, kl);

		if (ke) {
			strcpy(e->keys[e->n] + o, "-");
			hex(e->keys[e->n] + o + 1, ke, el_len);
		}
		if (nftnl_set_elem_is_set(el, NFTNL_SET_ELEM_TIMEOUT))
			e->timeout[e->n] = nftnl_set_elem_get_u64(el, NFTNL_SET_ELEM_TIMEOUT);
		uint32_t ul = 0;
		const uint8_t *ud = nftnl_set_elem_get(el, NFTNL_SET_ELEM_USERDATA, &ul);
		if (ud && ul > 2 && ud[0] == 0) /* comment TLV: type 0, length, text */
			snprintf(e->comment[e->n], 64, "%s", (const char *)ud + 2);
		e->n++;
	}
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return 0;
}

static struct elems set_elems(const char *set)
{
	struct elems e = {.set = set};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, elems_cb, &e), 0);
	ng_batch_free(&b);
	ng_policy_free(&p);
	return e;
}

static void test_set_encoding(void **state)
{
	(void)state;
	struct elems e;

	/* addr . proto . port, each field padded to 4 bytes, port big endian. */
	e = set_elems("allow_v4");
	assert_int_equal(e.n, 1);
	assert_string_equal(e.keys[0], "0a1400000600000001bb0000-0a14ffff0600000001bb0000");
	assert_int_equal(e.flags, NFT_SET_CONSTANT | NFT_SET_INTERVAL | NFT_SET_CONCAT);
	e = set_elems("allow_v6");
	assert_string_equal(e.keys[0], "fd000020000000000000000000000000110000001388000"
				       "0-fd00002000000000ffffffffffffffff1100000013920000");
	/* Names: the pinned set is constant and says when each address
	 * expires; its _ttl twin carries the timeout, in milliseconds. */
	e = set_elems("names_v4");
	assert_int_equal(e.timeout[0], 0);
	assert_int_equal(e.flags, NFT_SET_CONSTANT | NFT_SET_INTERVAL | NFT_SET_CONCAT);
	assert_string_equal(e.comment[0], "until 2026-11-30T01:53:20Z"); /* names_at + 3600 s */
	e = set_elems("names_v4_ttl");
	assert_int_equal(e.timeout[0], 3600000);
	assert_int_equal(e.flags, NFT_SET_INTERVAL | NFT_SET_CONCAT | NFT_SET_TIMEOUT);
	/* Plain address sets: a key only, constant hash. */
	e = set_elems("metadata_v4");
	assert_string_equal(e.keys[0], "a9fea9fe");
	assert_int_equal(e.flags, NFT_SET_CONSTANT);
	/* ICMPv6 type as a 1-byte field padded to 4. */
	e = set_elems("nd_v6");
	assert_string_equal(e.keys[0], "fe80000000000000000000000000000087000000-"
				       "febfffffffffffffffffffffffffffff88000000");
	/* addr . port for ingress. */
	e = set_elems("ingress_v4");
	assert_string_equal(e.keys[0], "0af400001f900000-0af4ffff1f900000");
	/* DNS: exact concatenation, no interval. */
	e = set_elems("dns_v4");
	assert_int_equal(e.n, 2);
	assert_string_equal(e.keys[0], "0a60000a1100000000350000");
	assert_int_equal(e.flags, NFT_SET_CONSTANT);
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
	 * (metadata x2, dns, allow_v6, names and names_ttl, nd, ingress, node);
	 * the netdev guard has the same. */
	assert_int_equal(elem_msgs, (8 + 9) + (8 + 9));
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

/* ---- golden snapshot and diff ---------------------------------------------- */

static char *golden_path(void)
{
	static char path[4096];
	char file[4096];

	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(path, sizeof(path), "%s/golden/ruleset.txt", dirname(file));
	return path;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_golden(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct ng_snapshot s = {.table = NG_TABLE}, raw = {.table = NG_TABLE, .family = NFPROTO_NETDEV};
	char *got = NULL, *want = NULL;
	size_t got_len = 0;
	FILE *f;

	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&s, &b), 0);
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	qsort(s.lines.v, s.lines.n, sizeof(char *), cmp_lines);
	qsort(raw.lines.v, raw.lines.n, sizeof(char *), cmp_lines);
	f = open_memstream(&got, &got_len);
	for (size_t i = 0; i < s.lines.n; i++)
		fprintf(f, "%s\n", s.lines.v[i]);
	/* The packet-socket guard: table netdev of the same name. */
	for (size_t i = 0; i < raw.lines.n; i++)
		fprintf(f, "netdev: %s\n", raw.lines.v[i]);
	fclose(f);

	if (getenv("UPDATE_GOLDEN")) {
		f = fopen(golden_path(), "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	f = fopen(golden_path(), "r");
	if (!f)
		fail_msg("cannot read %s (run with UPDATE_GOLDEN=1 to create it)", golden_path());
	want = calloc(1, 1 << 20);
	assert_true(fread(want, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	if (strcmp(want, got) != 0)
		fail_msg("rendered ruleset differs from %s; got:\n%s", golden_path(), got);
	free(want);
	free(got);
	ng_snapshot_free(&s);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

static void test_snapshot_diff(void **state)
{
	(void)state;
	struct ng_policy p, q;
	struct ng_batch b1, b2;
	struct ng_err err = {0};
	struct ng_snapshot s1 = {0}, s2 = {0}, s3 = {0};

	sample_policy(&p, NG_DENY_REJECT);
	sample_policy(&q, NG_DENY_DROP);
	ng_batch_init(&b1, NG_TABLE, 1, &err);
	ng_render_replace(&p, &b1, &err);
	ng_batch_init(&b2, NG_TABLE, 1, &err);
	ng_render_replace(&q, &b2, &err);
	ng_snapshot_from_batch(&s1, &b1);
	ng_snapshot_from_batch(&s2, &b2);
	ng_snapshot_from_batch(&s3, &b1);
	assert_int_equal(ng_snapshot_diff(&s1, &s3, &err), 0);
	assert_int_equal(ng_snapshot_diff(&s1, &s2, &err), -1);
	assert_int_equal(err.code, NG_E_CHECK);
	assert_contains(err.msg, "chain refuse_egress");
	/* reject (tcp reset, icmpx) became drop: two rules out, one in. */
	assert_contains(err.msg, "(3 differences); first: unexpected rule at position 2 of chain "
				 "refuse_egress: [ immediate reg 0 drop ]");
	/* details: the other two, not the first again (msg has said it). */
	assert_contains(err.details, "missing rule 2 of chain refuse_egress: [ meta load l4proto");
	assert_contains(err.details, "missing rule 3 of chain refuse_egress: [ reject type 2 code 3 ]");
	assert_null(strstr(err.details, "unexpected rule at position 2"));

	/* One rule inserted at the top of a chain is one difference, not a
	 * shift of every rule after it. */
	char *extra = strdup("chain egress rule 000: [ immediate reg 0 accept ] comment \"\"");
	struct ng_snapshot s4 = {0};
	ng_snapshot_from_batch(&s4, &b1);
	assert_int_equal(ng_vec_push(&s4.lines, &extra), 0);
	/* ...placed first among the egress rules, as a dump would list it. */
	size_t at = 0;
	while (at < s4.lines.n && strncmp(s4.lines.v[at], "chain egress rule 001", 21) != 0)
		at++;
	assert_true(at < s4.lines.n);
	memmove(&s4.lines.v[at + 1], &s4.lines.v[at], (s4.lines.n - 1 - at) * sizeof(char *));
	s4.lines.v[at] = extra;
	assert_int_equal(ng_snapshot_diff(&s3, &s4, &err), -1);
	assert_contains(err.msg, "(1 difference): unexpected rule at position 1 of chain egress");
	assert_string_equal(err.details, "");
	ng_snapshot_free(&s4);

	/* A set element added by hand, and one of ours changed: both named in
	 * nft's syntax, as `nft list set` shows them, not as hex keys. */
	struct ng_snapshot s5 = {0};
	ng_snapshot_from_batch(&s5, &b1);
	for (size_t i = 0; i < s5.lines.n; i++) {
		if (!strncmp(s5.lines.v[i], "set allow_v4 element ", 21)) {
			free(s5.lines.v[i]);
			/* 10.20.0.0/16 . tcp . 443 became 10.20.0.0/16 . tcp . 444 */
			s5.lines.v[i] = strdup("set allow_v4 element 0a1400000600000001bc0000 - "
					       "0a14ffff0600000001bc0000 flags 0x0");
		}
	}
	extra = strdup("set allow_v4 element 0a1e01000600000001bb0000 - 0a1e01ff0600000001bb0000 flags 0x0");
	assert_int_equal(ng_vec_push(&s5.lines, &extra), 0);
	assert_int_equal(ng_snapshot_diff(&s3, &s5, &err), -1);
	assert_contains(
		err.msg,
		"(3 differences); first: missing: set allow_v4 element 10.20.0.0/16 . tcp . 443 flags 0x0");
	assert_contains(err.details, "unexpected: set allow_v4 element 10.20.0.0/16 . tcp . 444 flags 0x0");
	assert_contains(err.details, "unexpected: set allow_v4 element 10.30.1.0/24 . tcp . 443 flags 0x0");
	assert_null(strstr(err.details, "0a1e01"));
	assert_null(strstr(err.details, "missing: set allow_v4 element 10.20.0.0/16 . tcp . 443"));
	ng_snapshot_free(&s5);
	ng_snapshot_free(&s1);
	ng_snapshot_free(&s2);
	ng_snapshot_free(&s3);
	ng_batch_free(&b1);
	ng_batch_free(&b2);
	ng_policy_free(&p);
	ng_policy_free(&q);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_sequence),
		cmocka_unit_test(test_egress_order),
		cmocka_unit_test(test_raw_guard),
		cmocka_unit_test(test_ingress_order),
		cmocka_unit_test(test_deny_actions),
		cmocka_unit_test(test_logging_rules),
		cmocka_unit_test(test_set_encoding),
		cmocka_unit_test(test_create_batch),
		cmocka_unit_test(test_message_bound),
		cmocka_unit_test(test_delete_batch),
		cmocka_unit_test(test_large_set_splits),
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_snapshot_diff),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
