#include "nft/render_objs.h"

#include <arpa/inet.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdio.h>

#include "nft/render.h"
#include "nft/render_chain.h"
#include "nft/render_guard.h"
#include "nft/render_mld.h"
#include "nft/render_log.h"
#include "nft/rulebuild.h"

void ng_render_set_specs(const struct ng_policy *p, struct ng_set_spec sets[NG_S_COUNT])
{
	/* name, family, key, interval, timeout, contents */
#define ADDR_SET(n, f, v) (struct ng_set_spec){.name = (n), .fam = (f), .kind = NG_SK_ADDR, .ips = (v)}
#define SET(n, f, k, iv, to, v)                                                                       \
	(struct ng_set_spec)                                                                          \
	{                                                                                             \
		.name = (n), .fam = (f), .kind = (k), .interval = (iv), .timeout = (to), .elems = (v) \
	}
	sets[NG_S_META4] = ADDR_SET("metadata_v4", NG_V4, &p->metadata[0]);
	sets[NG_S_META6] = ADDR_SET("metadata_v6", NG_V6, &p->metadata[1]);
	sets[NG_S_META6E] = ADDR_SET("metadata_v6_embedded", NG_V6, &p->metadata6_embedded);
	sets[NG_S_DNS4] = SET("dns_v4", NG_V4, NG_SK_ADDR_PROTO_PORT, false, false, &p->dns[0]);
	sets[NG_S_DNS6] = SET("dns_v6", NG_V6, NG_SK_ADDR_PROTO_PORT, false, false, &p->dns[1]);
	sets[NG_S_ALLOW4] = SET("allow_v4", NG_V4, NG_SK_ADDR_PROTO_PORT, true, false, &p->allow[0]);
	sets[NG_S_ALLOW6] = SET("allow_v6", NG_V6, NG_SK_ADDR_PROTO_PORT, true, false, &p->allow[1]);
	sets[NG_S_NAMES4] = SET(NG_SET_NAMES_V4, NG_V4, NG_SK_ADDR_PROTO_PORT, true, false, &p->names[0]);
	sets[NG_S_NAMES6] = SET(NG_SET_NAMES_V6, NG_V6, NG_SK_ADDR_PROTO_PORT, true, false, &p->names[1]);
	sets[NG_S_TTL4] =
		SET(NG_SET_NAMES_V4 NG_TTL_SUFFIX, NG_V4, NG_SK_ADDR_PROTO_PORT, true, true, &p->names[0]);
	sets[NG_S_TTL6] =
		SET(NG_SET_NAMES_V6 NG_TTL_SUFFIX, NG_V6, NG_SK_ADDR_PROTO_PORT, true, true, &p->names[1]);
	sets[NG_S_ND6] = SET("nd_v6", NG_V6, NG_SK_ADDR_ICMP6, true, false, &p->nd6);
	sets[NG_S_IN4] = SET("ingress_v4", NG_V4, NG_SK_ADDR_PORT, true, false, &p->ingress[0]);
	sets[NG_S_IN6] = SET("ingress_v6", NG_V6, NG_SK_ADDR_PORT, true, false, &p->ingress[1]);
	sets[NG_S_NODE4] = ADDR_SET("node_v4", NG_V4, &p->node[0]);
	sets[NG_S_NODE6] = ADDR_SET("node_v6", NG_V6, &p->node[1]);
	sets[NG_S_SRC4] = ADDR_SET("source_v4", NG_V4, &p->source[0]);
	sets[NG_S_SRC6] = ADDR_SET("source_v6", NG_V6, &p->source[1]);
	sets[NG_S_MLD6] = ADDR_SET("mld_v6", NG_V6, &p->mld6);
	sets[NG_S_MLD6].nh_bits = NG_MLD_GROUP_BITS;
#undef SET
#undef ADDR_SET
	for (int i = NG_S_NAMES4; i <= NG_S_TTL6; i++)
		sets[i].from_dns = true;
	sets[NG_S_NAMES4].expires_base = sets[NG_S_NAMES6].expires_base = p->names_at;
	if (!p->learn)
		return;
	/* Learned: a hash set for single ports (a lookup and a commit cost the
	 * same at 10 or 10,000 elements) and an interval set for port ranges,
	 * both with timeouts, empty at ADD (a repair carries p->learned). */
	for (int f = 0; f < 2; f++) {
		struct ng_set_spec *single = &sets[NG_S_NAMES4 + f], *ranges = &sets[NG_S_TTL4 + f];

		single->interval = false;
		single->timeout = true;
		single->learned = true;
		single->expires_base = 0;
		single->elems = &p->learned[0][f];
		ranges->elems = &p->learned[1][f];
		ranges->name = f == 0 ? NG_SET_NAMES_V4 NG_RANGES_SUFFIX : NG_SET_NAMES_V6 NG_RANGES_SUFFIX;
		ranges->learned = true;
	}
}

const char *ng_refuse_counter(const struct ng_policy *p, const char *counter, bool metadata, char *buf,
			      size_t len)
{
	size_t n = strlen(counter);

	if (!p->audit || metadata || n < 7 || strcmp(counter + n - 7, "_denied") != 0)
		return counter;
	snprintf(buf, len, "%.*s_would_deny", (int)(n - 7), counter);
	return buf;
}

void ng_counter_category(const char *counter, char *out, size_t len, bool *would_deny)
{
	const char *suffix = strstr(counter, "_would_deny");

	*would_deny = suffix != NULL;
	if (!suffix)
		suffix = strstr(counter, "_denied");
	snprintf(out, len, "%.*s", suffix ? (int)(suffix - counter) : (int)strlen(counter), counter);
}

int ng_render_refuse_counter(const struct ng_policy *p, struct ng_batch *b, const char *counter)
{
	char name[NG_COUNTER_NAME_MAX];

	return ng_render_counter(b, ng_refuse_counter(p, counter, false, name, sizeof(name)));
}

int ng_render_refuse_chain(const struct ng_policy *p, struct ng_batch *b, const char *chain,
			   const char *counter, const char *category, enum ng_log_table t)
{
	/* Cloud metadata is refused in every mode: audit never opens it. */
	bool metadata = strcmp(category, "metadata") == 0;
	bool audit = p->audit && !metadata;
	const char *what = ng_refuse_what(t, category);
	struct ng_rb rb;
	char c[NFTNL_UDATA_COMMENT_MAXLEN], name[NG_COUNTER_NAME_MAX], log_chain[64];

	ng_rb_begin(&rb, b, chain);
	ng_rb_counter(&rb, ng_refuse_counter(p, counter, metadata, name, sizeof(name)));
	snprintf(c, sizeof(c), audit ? "%s: count (audit: would deny)" : "%s: count", what);
	if (ng_rb_end(&rb, b, c) < 0)
		return -1;

	if (p->nflog) {
		ng_log_chain_name(chain, log_chain, sizeof(log_chain));
		if (ng_render_log_chain(p, b, t, log_chain, category, audit, what) < 0)
			return -1;
		ng_rb_begin(&rb, b, chain);
		ng_rb_verdict(&rb, NFT_JUMP, log_chain);
		snprintf(c, sizeof(c), "%s: log to NFLOG group %u, at most %u/s (burst %u) per table", what,
			 p->nflog_group, p->log_rate, p->log_burst);
		if (ng_rb_end(&rb, b, c) < 0)
			return -1;
	}

	if (audit || !ng_refuse_rejects(t, category, p->deny)) {
		ng_rb_begin(&rb, b, chain);
		ng_rb_verdict(&rb, audit ? NF_ACCEPT : NF_DROP, NULL);
		ng_refuse_verdict_comment(audit, false, false, what, c, sizeof(c));
		return ng_rb_end(&rb, b, c);
	}
	ng_rb_begin(&rb, b, chain);
	ng_rb_l4proto(&rb, IPPROTO_TCP);
	ng_rb_reject(&rb, NFT_REJECT_TCP_RST, 0);
	ng_refuse_verdict_comment(false, true, true, what, c, sizeof(c));
	if (ng_rb_end(&rb, b, c) < 0)
		return -1;

	ng_rb_begin(&rb, b, chain);
	ng_rb_reject(&rb, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	ng_refuse_verdict_comment(false, true, false, what, c, sizeof(c));
	return ng_rb_end(&rb, b, c);
}

int ng_render_lookup_rule(struct ng_batch *b, const struct ng_lookup_rule *r)
{
	const struct ng_set_spec *s = r->set;
	struct ng_rb rb;
	unsigned w;

	ng_rb_begin(&rb, b, r->chain);
	if (r->not_invalid)
		ng_rb_ct_state_none(&rb, NF_CT_STATE_INVALID_BIT);
	if (s->kind == NG_SK_ADDR_ICMP6)
		ng_rb_l4proto(&rb, IPPROTO_ICMPV6);
	else if (s->kind == NG_SK_ADDR_PORT)
		ng_rb_l4proto(&rb, IPPROTO_TCP);
	else if (r->l4proto)
		ng_rb_l4proto(&rb, r->l4proto);
	if (r->nfproto)
		ng_rb_nfproto(&rb, s->fam);
	if (r->protocol) {
		uint16_t be = htons(s->fam == NG_V4 ? 0x0800 : 0x86dd);

		ng_rb_meta(&rb, NFT_META_PROTOCOL, NG_W0);
		ng_rb_cmp(&rb, NFT_CMP_EQ, &be, 2);
	}
	if (r->no_syn_only) {
		uint8_t syn_ack = 0x12, syn = 0x02;

		/* tcp flags & (syn | ack) != syn */
		ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 13, 1, NG_W0);
		ng_rb_masked_cmp(&rb, NFT_CMP_NEQ, &syn_ack, &syn, 1);
	}
	if (r->from_unspecified) {
		static const uint8_t any[16];

		ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 8, 16, NG_W0);
		ng_rb_cmp(&rb, NFT_CMP_EQ, any, 16);
	}
	w = ng_rb_addr(&rb, s->fam, r->dst, NG_W0);
	switch (s->kind) {
	case NG_SK_ADDR: break;
	case NG_SK_ADDR_PROTO_PORT:
		ng_rb_meta(&rb, NFT_META_L4PROTO, w);
		ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, r->sport ? 0 : 2, 2, w + 1);
		break;
	case NG_SK_ADDR_PORT: ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, r->sport ? 0 : 2, 2, w); break;
	case NG_SK_ADDR_ICMP6: ng_rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, w); break;
	}
	if (r->invert)
		ng_rb_lookup_inv(&rb, s->name, s->id);
	else
		ng_rb_lookup(&rb, s->name, s->id);
	if (r->also)
		ng_rb_lookup(&rb, r->also->name, r->also->id);
	if (r->observe)
		ng_rb_log_copy(&rb, NG_OBSERVE_GROUP, NG_OBSERVE_SNAPLEN);
	if (r->queue)
		ng_rb_nfqueue(&rb, NG_AGENT_QUEUE);
	else if (!r->no_verdict)
		ng_rb_verdict(&rb, r->jump ? NFT_JUMP : NF_ACCEPT, r->jump);
	return ng_rb_end(&rb, b, r->comment);
}

int ng_render_egress_lookup(struct ng_batch *b, struct ng_lookup_rule r, const struct ng_set_spec *sets,
			    int i, int f, const char *refuse)
{
	/* Each IPv6 set follows its IPv4 twin in the set list. */
	static const struct {
		int set, also;
		bool refused;
		const char *what;
	} lookups[NG_EGRESS_LOOKUPS] = {
		{NG_S_META4, -1, true, "cloud metadata %s: always refused, before any allow rule"},
		{NG_S_DNS4, -1, false, "DNS to dns.servers %s"},
		{NG_S_ALLOW4, -1, false, "egress.allow and pod grants %s"},
		{NG_S_NAMES4, NG_S_TTL4, false, "DNS names resolved at ADD, for the pod's life %s"},
		{NG_S_TTL4, -1, false, "DNS names with port ranges, learned from the pod's answers %s"},
	};
	const char *learned = "DNS names learned from the pod's answers, within their lifetime %s";
	bool learn = sets[NG_S_NAMES4].learned;
	char comment[96];

	/* Resolved at ADD: one rule, the pinned set and its _ttl twin. Learned:
	 * two rules, the single-port set and the port-range set. */
	if (i == NG_EGRESS_LOOKUPS - 1 && !learn)
		return 0;
	snprintf(comment, sizeof(comment), learn && i == 3 ? learned : lookups[i].what,
		 f == 0 ? "(IPv4)" : "(IPv6)");
	r.set = &sets[lookups[i].set + f];
	r.also = lookups[i].also >= 0 && !learn ? &sets[lookups[i].also + f] : NULL;
	r.dst = true;
	r.jump = lookups[i].refused ? refuse : NULL;
	r.comment = comment;
	if (ng_render_lookup_rule(b, &r) < 0)
		return -1;
	if (lookups[i].set != NG_S_META4 || f != 1)
		return 0;
	/* Then the IPv4 metadata addresses in IPv6 forms with free bits. */
	return ng_render_metadata_forms(
		b,
		&(struct ng_guard_ctx){
			.chain = r.chain, .nfproto = r.nfproto, .protocol = r.protocol, .refuse = refuse},
		&sets[NG_S_META6E]);
}

int ng_render_source_rules(struct ng_batch *b, struct ng_lookup_rule r, const struct ng_set_spec *sets,
			   const char *refuse, int f)
{
	struct ng_lookup_rule nd = r, v4 = r, v6 = r;
	int rc = 0;

	nd.set = &sets[NG_S_ND6];
	nd.dst = true;
	nd.from_unspecified = true;
	nd.comment = "neighbour discovery from ::, as duplicate address detection sends it";
	v4.set = &sets[NG_S_SRC4];
	v4.invert = true;
	v4.jump = refuse;
	v4.comment = "only from the pod's own addresses (IPv4)";
	v6.set = &sets[NG_S_SRC6];
	v6.invert = true;
	v6.jump = refuse;
	v6.comment = "only from the pod's own addresses, link-local included (IPv6)";
	if (f != 1)
		rc |= ng_render_lookup_rule(b, &v4);
	if (f != 0) {
		rc |= ng_render_lookup_rule(b, &nd);
		rc |= ng_render_mld_jump(b,
					 &(struct ng_guard_ctx){.chain = r.chain,
								.nfproto = r.nfproto,
								.protocol = r.protocol},
					 sets[NG_S_MLD6].ips->n, true);
		rc |= ng_render_lookup_rule(b, &v6);
	}
	return rc;
}
