/* The ruleset, as nft would print it (see README "The ruleset"):
 *
 * table inet boxxkite_netguard {
 *   chain egress {   type filter hook output priority filter; policy drop;
 *     oif "lo" accept
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip daddr @metadata_v4 jump refuse_metadata        (and ip6 ... _v6)
 *     ip daddr . meta l4proto . th dport @dns_v4 accept  (and _v6)
 *     ip daddr . meta l4proto . th dport @allow_v4 accept
 *     ip daddr . meta l4proto . th dport @names_v4 ... @names_v4_ttl accept
 *     ip6 daddr . icmpv6 type @nd_v6 accept
 *     jump refuse_egress
 *   }
 *   chain ingress {  type filter hook input priority filter; policy drop;
 *     iif "lo" accept
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip saddr . tcp dport @ingress_v4 accept            (and _v6)
 *     meta l4proto tcp ip saddr @node_v4 accept           (and _v6)
 *     ip6 hoplimit 255 icmpv6 type 135-136 accept
 *     jump refuse_ingress
 *   }
 *   chain refuse_metadata { counter name "metadata_denied"; [log]
 *     meta l4proto tcp reject with tcp reset; reject with icmpx admin-prohibited }
 *   chain refuse_egress { counter name "egress_denied"; [log]; <denyAction> }
 *   chain refuse_ingress { counter name "ingress_denied"; [log]; drop }
 *
 * [log] is `limit rate R/second burst B packets log prefix "..." group G`,
 * present when the config has log.nflogGroup.
 * }
 *
 * Expressions are encoded the way nft 1.0 encodes them, so `nft list
 * ruleset` prints the rules above and reviewers can diff against it. */
#include "render.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "rulebuild.h"
#include "setspec.h"

/* `ip daddr . meta l4proto . th dport @set accept` and friends; with
 * `also`, the same key must be in that set too. */
static int rule_lookup_accept(struct ng_batch *b, const char *chain, bool dst, const struct ng_set_spec *s,
			      const struct ng_set_spec *also, const char *comment)
{
	struct ng_rb rb;
	unsigned w;

	ng_rb_begin(&rb, b, chain);
	if (s->kind == NG_SK_ADDR_ICMP6)
		ng_rb_l4proto(&rb, IPPROTO_ICMPV6);
	if (s->kind == NG_SK_ADDR_PORT)
		ng_rb_l4proto(&rb, IPPROTO_TCP);
	ng_rb_nfproto(&rb, s->fam);
	w = ng_rb_addr(&rb, s->fam, dst, NG_W0);
	switch (s->kind) {
	case NG_SK_ADDR: break;
	case NG_SK_ADDR_PROTO_PORT:
		ng_rb_meta(&rb, NFT_META_L4PROTO, w);
		ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, w + 1);
		break;
	case NG_SK_ADDR_PORT: ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, w); break;
	case NG_SK_ADDR_ICMP6: ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, w); break;
	}
	ng_rb_lookup(&rb, s->name, s->id);
	if (also)
		ng_rb_lookup(&rb, also->name, also->id);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	return ng_rb_end(&rb, b, comment);
}

static int rule_common_head(struct ng_batch *b, const char *chain, bool egress)
{
	struct ng_rb rb;
	uint32_t lo = 1; /* the loopback device is ifindex 1 in every netns */

	ng_rb_begin(&rb, b, chain);
	ng_rb_meta(&rb, egress ? NFT_META_OIF : NFT_META_IIF, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, &lo, 4);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	if (ng_rb_end(&rb, b, "loopback") < 0)
		return -1;

	ng_rb_begin(&rb, b, chain);
	ng_rb_ct_state(&rb, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	if (ng_rb_end(&rb, b, "replies and related packets of allowed connections") < 0)
		return -1;

	ng_rb_begin(&rb, b, chain);
	ng_rb_ct_state(&rb, NF_CT_STATE_INVALID_BIT);
	ng_rb_verdict(&rb, NF_DROP, NULL);
	return ng_rb_end(&rb, b, "invalid packets");
}

/* counter name NAME, then reject (TCP reset / ICMP admin-prohibited) or drop */
/* A refuse chain: count; optionally log (rate-limited, so a flood of denied
 * packets cannot flood the collector); then reject with a TCP reset or ICMP
 * admin-prohibited (a blocked connect fails at once), or drop. */
static int refuse_chain(const struct ng_policy *p, struct ng_batch *b, const char *chain, const char *counter,
			const char *category, bool reject, const char *what)
{
	struct ng_rb rb;
	char c[NFTNL_UDATA_COMMENT_MAXLEN], prefix[NG_LOG_PREFIX_MAX + 1];

	ng_rb_begin(&rb, b, chain);
	ng_rb_counter(&rb, counter);
	snprintf(c, sizeof(c), "%s: count", what);
	if (ng_rb_end(&rb, b, c) < 0)
		return -1;

	if (p->nflog) {
		/* NF_LOG_PREFIXLEN allows 127 bytes; keep it short for collectors. */
		snprintf(prefix, sizeof(prefix), "netguard %s %.40s: ", category, p->pod);
		ng_rb_begin(&rb, b, chain);
		ng_rb_limit(&rb, p->log_rate, p->log_burst);
		ng_rb_log(&rb, prefix, p->nflog_group);
		snprintf(c, sizeof(c), "%s: log to NFLOG group %u, at most %u/s (burst %u)", what,
			 p->nflog_group, p->log_rate, p->log_burst);
		if (ng_rb_end(&rb, b, c) < 0)
			return -1;
	}

	if (!reject) {
		ng_rb_begin(&rb, b, chain);
		ng_rb_verdict(&rb, NF_DROP, NULL);
		snprintf(c, sizeof(c), "%s: drop", what);
		return ng_rb_end(&rb, b, c);
	}
	ng_rb_begin(&rb, b, chain);
	ng_rb_l4proto(&rb, IPPROTO_TCP);
	ng_rb_reject(&rb, NFT_REJECT_TCP_RST, 0);
	snprintf(c, sizeof(c), "%s: TCP reset, so connect() fails at once", what);
	if (ng_rb_end(&rb, b, c) < 0)
		return -1;

	ng_rb_begin(&rb, b, chain);
	ng_rb_reject(&rb, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	snprintf(c, sizeof(c), "%s: ICMP administratively prohibited", what);
	return ng_rb_end(&rb, b, c);
}

/* ---- table, chains, counters -------------------------------------------- */

static int render_table(struct ng_batch *b, uint16_t type, uint16_t flags, const char *comment,
			const char *what)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t)
		return -1;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, b->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (comment && *comment) {
		struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);

		if (!ud || !nftnl_udata_put_strz(ud, NFTNL_UDATA_TABLE_COMMENT, comment)) {
			nftnl_udata_buf_free(ud);
			nftnl_table_free(t);
			return -1;
		}
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
				     nftnl_udata_buf_len(ud));
		nftnl_udata_buf_free(ud);
	}
	nlh = ng_batch_msg(b, type, flags, "table inet %s (%s)", b->table, what);
	nftnl_table_nlmsg_build_payload(nlh, t);
	ng_batch_commit_msg(b);
	nftnl_table_free(t);
	return 0;
}

static int render_chain(struct ng_batch *b, const char *name, int hook)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (!c)
		return -1;
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, b->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_DROP);
	}
	nlh = ng_batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "chain %s", name);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	ng_batch_commit_msg(b);
	nftnl_chain_free(c);
	return 0;
}

static int render_counter(struct ng_batch *b, const char *name)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;

	if (!o)
		return -1;
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, b->table);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nlh = ng_batch_msg(b, NFT_MSG_NEWOBJ, NLM_F_CREATE, "counter %s", name);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	ng_batch_commit_msg(b);
	nftnl_obj_free(o);
	return 0;
}

/* ---- the whole ruleset --------------------------------------------------- */

enum {
	S_META4,
	S_META6,
	S_DNS4,
	S_DNS6,
	S_ALLOW4,
	S_ALLOW6,
	S_NAMES4,
	S_NAMES6,
	S_TTL4,
	S_TTL6,
	S_ND6,
	S_IN4,
	S_IN6,
	S_NODE4,
	S_NODE6,
	S_COUNT
};

static int render_body(const struct ng_policy *p, struct ng_batch *b)
{
	/* name, family, key, interval, timeout, contents */
#define ADDR_SET(n, f, v)                                               \
	{                                                               \
		.name = (n), .fam = (f), .kind = NG_SK_ADDR, .ips = (v) \
	}
#define SET(n, f, k, iv, to, v)                                                                       \
	{                                                                                             \
		.name = (n), .fam = (f), .kind = (k), .interval = (iv), .timeout = (to), .elems = (v) \
	}
	struct ng_set_spec sets[S_COUNT] = {
		[S_META4] = ADDR_SET("metadata_v4", NG_V4, &p->metadata[0]),
		[S_META6] = ADDR_SET("metadata_v6", NG_V6, &p->metadata[1]),
		[S_DNS4] = SET("dns_v4", NG_V4, NG_SK_ADDR_PROTO_PORT, false, false, &p->dns[0]),
		[S_DNS6] = SET("dns_v6", NG_V6, NG_SK_ADDR_PROTO_PORT, false, false, &p->dns[1]),
		[S_ALLOW4] = SET("allow_v4", NG_V4, NG_SK_ADDR_PROTO_PORT, true, false, &p->allow[0]),
		[S_ALLOW6] = SET("allow_v6", NG_V6, NG_SK_ADDR_PROTO_PORT, true, false, &p->allow[1]),
		[S_NAMES4] = SET(NG_SET_NAMES_V4, NG_V4, NG_SK_ADDR_PROTO_PORT, true, false, &p->names[0]),
		[S_NAMES6] = SET(NG_SET_NAMES_V6, NG_V6, NG_SK_ADDR_PROTO_PORT, true, false, &p->names[1]),
		[S_TTL4] = SET(NG_SET_NAMES_V4 NG_TTL_SUFFIX, NG_V4, NG_SK_ADDR_PROTO_PORT, true, true,
			       &p->names[0]),
		[S_TTL6] = SET(NG_SET_NAMES_V6 NG_TTL_SUFFIX, NG_V6, NG_SK_ADDR_PROTO_PORT, true, true,
			       &p->names[1]),
		[S_ND6] = SET("nd_v6", NG_V6, NG_SK_ADDR_ICMP6, true, false, &p->nd6),
		[S_IN4] = SET("ingress_v4", NG_V4, NG_SK_ADDR_PORT, true, false, &p->ingress[0]),
		[S_IN6] = SET("ingress_v6", NG_V6, NG_SK_ADDR_PORT, true, false, &p->ingress[1]),
		[S_NODE4] = ADDR_SET("node_v4", NG_V4, &p->node[0]),
		[S_NODE6] = ADDR_SET("node_v6", NG_V6, &p->node[1]),
	};
#undef SET
#undef ADDR_SET
	const char *eg = NG_CHAIN_EGRESS, *in = NG_CHAIN_INGRESS;
	bool reject = p->deny == NG_DENY_REJECT;
	int rc = 0;
	struct ng_rb rb;
	uint8_t v;

	for (int i = S_NAMES4; i <= S_TTL6; i++)
		sets[i].from_dns = true;
	sets[S_NAMES4].expires_base = sets[S_NAMES6].expires_base = p->names_at;
	if (render_counter(b, NG_COUNTER_METADATA) < 0 || render_counter(b, NG_COUNTER_EGRESS) < 0 ||
	    render_counter(b, NG_COUNTER_INGRESS) < 0)
		return -1;
	/* Sets and their elements before any rule binds them: a constant set
	 * takes no elements once a rule refers to it. */
	for (int i = 0; i < S_COUNT; i++)
		if (ng_set_render(b, &sets[i]) < 0)
			return -1;
	if (render_chain(b, NG_CHAIN_REFUSE_METADATA, -1) < 0 ||
	    render_chain(b, NG_CHAIN_REFUSE_EGRESS, -1) < 0 ||
	    render_chain(b, NG_CHAIN_REFUSE_INGRESS, -1) < 0 || render_chain(b, eg, NF_INET_LOCAL_OUT) < 0 ||
	    render_chain(b, in, NF_INET_LOCAL_IN) < 0)
		return -1;

	/* Metadata is refused at once, whatever denyAction says: a connect
	 * that times out is what the seed calls "ambiguous". */
	rc |= refuse_chain(p, b, NG_CHAIN_REFUSE_METADATA, NG_COUNTER_METADATA, "metadata", true,
			   "cloud metadata");
	rc |= refuse_chain(p, b, NG_CHAIN_REFUSE_EGRESS, NG_COUNTER_EGRESS, "egress", reject,
			   "egress not allowed");
	rc |= refuse_chain(p, b, NG_CHAIN_REFUSE_INGRESS, NG_COUNTER_INGRESS, "ingress", false,
			   "ingress not allowed");

	rc |= rule_common_head(b, eg, true);
	for (int f = 0; f < 2; f++) {
		const struct ng_set_spec *s = &sets[S_META4 + f];

		ng_rb_begin(&rb, b, eg);
		ng_rb_nfproto(&rb, s->fam);
		ng_rb_addr(&rb, s->fam, true, NG_W0);
		ng_rb_lookup(&rb, s->name, s->id);
		ng_rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_METADATA);
		rc |= ng_rb_end(&rb, b,
				f == 0 ? "cloud metadata (IPv4): always refused, before any allow rule"
				       : "cloud metadata (IPv6): always refused, before any allow rule");
	}
	rc |= rule_lookup_accept(b, eg, true, &sets[S_DNS4], NULL, "DNS to dns.servers (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_DNS6], NULL, "DNS to dns.servers (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ALLOW4], NULL, "egress.allow and pod grants (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ALLOW6], NULL, "egress.allow and pod grants (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_NAMES4], &sets[S_TTL4],
				 "DNS names resolved at ADD, within their TTL (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_NAMES6], &sets[S_TTL6],
				 "DNS names resolved at ADD, within their TTL (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ND6], NULL, "IPv6 neighbour discovery, on-link only");
	ng_rb_begin(&rb, b, eg);
	ng_rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_EGRESS);
	rc |= ng_rb_end(&rb, b, "default deny");

	rc |= rule_common_head(b, in, false);
	rc |= rule_lookup_accept(b, in, false, &sets[S_IN4], NULL,
				 "ingress.ports from ingress.sources (IPv4)");
	rc |= rule_lookup_accept(b, in, false, &sets[S_IN6], NULL,
				 "ingress.ports from ingress.sources (IPv6)");
	for (int f = 0; f < 2; f++) {
		const struct ng_set_spec *s = &sets[S_NODE4 + f];

		ng_rb_begin(&rb, b, in);
		ng_rb_l4proto(&rb, IPPROTO_TCP);
		ng_rb_nfproto(&rb, s->fam);
		ng_rb_addr(&rb, s->fam, false, NG_W0);
		ng_rb_lookup(&rb, s->name, s->id);
		ng_rb_verdict(&rb, NF_ACCEPT, NULL);
		rc |= ng_rb_end(&rb, b,
				f == 0 ? "the node, any TCP port: kubelet probes (IPv4)"
				       : "the node, any TCP port: kubelet probes (IPv6)");
	}
	/* Neighbour discovery in: hop limit 255 proves it came from the link. */
	ng_rb_begin(&rb, b, in);
	ng_rb_nfproto(&rb, NG_V6);
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NG_W0);
	v = 255;
	ng_rb_cmp(&rb, NFT_CMP_EQ, &v, 1);
	ng_rb_l4proto(&rb, IPPROTO_ICMPV6);
	ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NG_W0);
	v = 135;
	ng_rb_cmp(&rb, NFT_CMP_GTE, &v, 1);
	v = 136;
	ng_rb_cmp(&rb, NFT_CMP_LTE, &v, 1);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	rc |= ng_rb_end(&rb, b, "IPv6 neighbour solicitation/advertisement from the link");
	ng_rb_begin(&rb, b, in);
	ng_rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_INGRESS);
	rc |= ng_rb_end(&rb, b, "default deny");
	return rc ? -1 : 0;
}

int ng_render_create(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	if (render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, p->comment, "create") < 0 ||
	    render_body(p, b) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the ruleset");
	return ng_batch_finish(b, err);
}

int ng_render_replace(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	if (render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing") < 0 ||
	    render_table(b, NFT_MSG_DELTABLE, 0, NULL, "remove the previous ruleset") < 0 ||
	    render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, p->comment, "new ruleset") < 0 ||
	    render_body(p, b) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the ruleset");
	return ng_batch_finish(b, err);
}

int ng_render_delete(struct ng_batch *b, struct ng_err *err)
{
	if (render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing") < 0 ||
	    render_table(b, NFT_MSG_DELTABLE, 0, NULL, "delete") < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the delete");
	return ng_batch_finish(b, err);
}
