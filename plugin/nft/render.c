/* The ruleset, as nft would print it (see README "The ruleset"):
 *
 * table inet boxxkite_netguard {
 *   chain egress {   type filter hook output priority filter; policy drop;
 *     oif "lo" accept
 *     ip saddr != @source_v4 jump refuse_source
 *     ip6 saddr :: ip6 daddr . icmpv6 type @nd_v6 accept  (DAD)
 *     ip6 saddr :: <MLDv2 report header> jump mld_report  (MLD while tentative)
 *     ip6 saddr != @source_v6 jump refuse_source
 *     exthdr rt exists jump refuse_egress; ip option lsrr|ssrr exists jump refuse_egress
 *     [learn] ct state related ct original proto-src 53 drop
 *     [learn] ct state != invalid ip daddr . meta l4proto . th dport @dns_v4 queue num 5353  (and _v6)
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip daddr @metadata_v4 jump refuse_metadata        (and ip6 ... _v6)
 *     ip6 daddr & MASK @metadata_v6_embedded jump refuse_metadata   (one per IPv6 form)
 *     ip daddr . meta l4proto . th dport @dns_v4 accept  (and _v6)
 *     ip daddr . meta l4proto . th dport @allow_v4 accept
 *     ip daddr . meta l4proto . th dport @names_v4 ... @names_v4_ttl accept
 *     ip6 daddr . icmpv6 type @nd_v6 accept
 *     <MLDv2 report header> jump mld_report
 *     jump refuse_egress
 *   }
 *   chain mld_report, mld_report_1 ...: the records, each naming one of the
 *     pod's solicited-node groups (@mld_v6): accept  (nft/render_mld.h)
 *   chain ingress {  type filter hook input priority filter; policy drop;
 *     iif "lo" accept
 *     exthdr rt exists jump refuse_ingress; ip option lsrr|ssrr exists jump refuse_ingress
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip saddr . tcp dport @ingress_v4 accept            (and _v6)
 *     meta l4proto tcp ip saddr @node_v4 accept           (and _v6)
 *     ip6 hoplimit 255 icmpv6 type 135-136 accept
 *     jump refuse_ingress
 *   }
 *   chain refuse_metadata { counter name "metadata_denied"; [jump log_metadata]
 *     meta l4proto tcp reject with tcp reset; reject with icmpx admin-prohibited }
 *   chain refuse_egress { counter name "egress_denied"; [jump log_egress]; <denyAction> }
 *   chain refuse_ingress { counter name "ingress_denied"; [jump log_ingress]; drop }
 *   chain refuse_source { counter name "source_denied"; [jump log_source]; drop }
 *
 * Audited (enforce.auditNamespaces): refuse_egress, _ingress and _source
 * count into egress_would_deny, ... log "would_deny" and accept; only
 * refuse_metadata still refuses.
 *
 * [jump log_<c>]: the log chains, the limit object log_limit and the
 * counter log_skipped (nft/render_log.h), unless the config says
 * "log": false.
 * }
 *
 * Expressions are encoded the way nft 1.0 encodes them, so `nft list
 * ruleset` prints the rules above and reviewers can diff against it. */
#include "nft/render.h"

#include <netinet/in.h> /* before linux/netfilter.h, which would define in_addr */
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <string.h>

#include "nft/render_chain.h"
#include "nft/render_guard.h"
#include "nft/render_mld.h"
#include "nft/render_objs.h"
#include "nft/render_raw.h"
#include "nft/rulebuild.h"

/* egress.names "learn": every packet to a resolver's port 53 goes to the
 * agent (README "DNS queries"), before "established" (a UDP socket's next
 * query, and every segment of a DNS-over-TCP connection after its SYN, are
 * established) and after the source checks (a query from an address not
 * the pod's never reaches the agent, which answers refused queries to the
 * sender). The agent lets a query on only when the pod may ask for its
 * name (dns.queries "listed"; "any": every one) and remembers it, so that
 * only answers to it teach. No bypass flag: with no agent, no query
 * leaves (fail closed). Its accept ends the chain as the DNS rule below
 * would have. */
static int render_dns_queries(struct ng_batch *b, const char *chain, const struct ng_set_spec *sets)
{
	struct ng_rb rb;
	int rc = 0;

	/* The agent's answer to a refused query arrives as a flow of its own
	 * from the resolver's port 53; if the pod's socket is already closed,
	 * the pod's stack would send the resolver a port unreachable quoting
	 * it: the refused name. ICMP errors about flows opened from port 53
	 * never leave (no flow the pod opened starts there). */
	ng_rb_begin(&rb, b, chain);
	ng_rb_ct_state(&rb, NF_CT_STATE_BIT(IP_CT_RELATED));
	ng_rb_ct_orig_sport(&rb, 53);
	ng_rb_verdict(&rb, NF_DROP, NULL);
	rc |= ng_rb_end(&rb, b, "ICMP errors about the agent's answers to refused queries: not sent");

	for (int f = 0; f < 2 && rc == 0; f++)
		rc = ng_render_lookup_rule(
			b, &(struct ng_lookup_rule){
				   .chain = chain,
				   .set = &sets[NG_S_DNS4 + f],
				   .dst = true,
				   .nfproto = true,
				   .not_invalid = true,
				   .queue = true,
				   .comment = f == 0 ? "queries to dns.servers, to the agent (IPv4)"
						     : "queries to dns.servers, to the agent (IPv6)"});
	return rc;
}

/* Loopback; on egress, the source checks; then packets that name their
 * own route; [learn: DNS queries to the agent]; then conntrack's verdicts. */
static int rule_common_head(const struct ng_policy *p, struct ng_batch *b, const char *chain, bool egress,
			    const struct ng_set_spec *sets, const char *refuse)
{
	struct ng_rb rb;
	uint32_t lo = 1; /* the loopback device is ifindex 1 in every netns */

	ng_rb_begin(&rb, b, chain);
	ng_rb_meta(&rb, egress ? NFT_META_OIF : NFT_META_IIF, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, &lo, 4);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	if (ng_rb_end(&rb, b, "loopback") < 0)
		return -1;
	/* Before conntrack: a spoofed packet is never "established". */
	if (egress && ng_render_source_rules(b, (struct ng_lookup_rule){.chain = chain, .nfproto = true},
					     sets, NG_CHAIN_REFUSE_SOURCE, NG_BOTH_FAMILIES) < 0)
		return -1;
	/* Before "established": a socket may set a routing header on a
	 * connection already allowed. */
	if (ng_render_no_source_route(
		    b, &(struct ng_guard_ctx){.chain = chain, .nfproto = true, .refuse = refuse}, 0) < 0)
		return -1;
	if (egress && p->learn && render_dns_queries(b, chain, sets) < 0)
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

/* ---- the inet table: the policy ------------------------------------------- */

/* egress.names "learn": chain dns_answers { type filter hook input priority
 * -10; policy accept; iif lo accept; ct state != established accept;
 * ip saddr . meta l4proto . th sport @dns_v4 queue num 5353 (and ip6) }. Every packet from a configured resolver's port 53 goes
 * to the agent before the ingress chain, which the agent lets it reach
 * only after the answer's addresses are in the name sets. No bypass flag:
 * with no agent bound to the queue the kernel drops them (fail closed). */
static int render_dns_answers(struct ng_batch *b, const struct ng_set_spec *sets)
{
	uint32_t lo_if = 1; /* the loopback device is ifindex 1 in every netns */
	struct ng_rb rb;
	int rc = ng_render_base_chain(b, NG_CHAIN_DNS_ANSWERS, NF_INET_LOCAL_IN, NULL,
				      NG_DNS_ANSWERS_PRIORITY, NF_ACCEPT);

	/* Only answers the pod's interface brought in teach the agent. A
	 * process with NET_RAW can write a packet "from" a resolver's port 53
	 * to its own address, and the egress chain lets loopback out first;
	 * such a packet goes on (accept ends this chain only) to the ingress
	 * chain unlearned. */
	ng_rb_begin(&rb, b, NG_CHAIN_DNS_ANSWERS);
	ng_rb_meta(&rb, NFT_META_IIF, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, &lo_if, 4);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	rc |= ng_rb_end(&rb, b, "loopback never teaches: not queued");
	/* And only replies to a query the pod's own stack sent (conntrack saw
	 * it leave): a packet from a resolver's address that answers nothing
	 * is not queued, and the ingress chain drops it. */
	ng_rb_begin(&rb, b, NG_CHAIN_DNS_ANSWERS);
	ng_rb_ct_state_none(&rb, NF_CT_STATE_BIT(IP_CT_ESTABLISHED));
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	rc |= ng_rb_end(&rb, b, "not a reply to the pod's own query: not queued");

	for (int f = 0; f < 2 && rc == 0; f++)
		rc = ng_render_lookup_rule(
			b, &(struct ng_lookup_rule){
				   .chain = NG_CHAIN_DNS_ANSWERS,
				   .set = &sets[NG_S_DNS4 + f],
				   .nfproto = true,
				   .sport = true,
				   .queue = true,
				   .comment = f == 0 ? "answers from dns.servers, to the agent (IPv4)"
						     : "answers from dns.servers, to the agent (IPv6)"});
	return rc;
}

static int render_body(const struct ng_policy *p, struct ng_batch *b, struct ng_set_spec *sets)
{
	const char *eg = NG_CHAIN_EGRESS, *in = NG_CHAIN_INGRESS;
	int rc = 0;
	struct ng_rb rb;
	uint8_t v;

	if (ng_render_counter(b, NG_COUNTER_METADATA) < 0 ||
	    ng_render_refuse_counter(p, b, NG_COUNTER_EGRESS) < 0 ||
	    ng_render_refuse_counter(p, b, NG_COUNTER_INGRESS) < 0 ||
	    ng_render_refuse_counter(p, b, NG_COUNTER_SOURCE) < 0 ||
	    ng_render_log_objects(p, b, NG_LOG_POD) < 0)
		return -1;
	/* Sets and their elements before any rule binds them: a constant set
	 * takes no elements once a rule refers to it. */
	for (int i = 0; i < NG_S_COUNT; i++)
		if (ng_set_render(b, &sets[i]) < 0)
			return -1;
	if (ng_render_chain(b, NG_CHAIN_REFUSE_METADATA, -1, NULL) < 0 ||
	    ng_render_chain(b, NG_CHAIN_REFUSE_EGRESS, -1, NULL) < 0 ||
	    ng_render_chain(b, NG_CHAIN_REFUSE_INGRESS, -1, NULL) < 0 ||
	    ng_render_chain(b, NG_CHAIN_REFUSE_SOURCE, -1, NULL) < 0 ||
	    ng_render_chain(b, eg, NF_INET_LOCAL_OUT, NULL) < 0 ||
	    ng_render_chain(b, in, NF_INET_LOCAL_IN, NULL) < 0 ||
	    ng_render_mld_chains(b, sets[NG_S_MLD6].ips->n) < 0)
		return -1;
	if (p->learn && render_dns_answers(b, sets) < 0)
		return -1;

	/* Metadata is refused at once, whatever denyAction says: a connect
	 * that times out is what the seed calls "ambiguous". */
	rc |= ng_render_refuse_chain(p, b, NG_CHAIN_REFUSE_METADATA, NG_COUNTER_METADATA, "metadata",
				     NG_LOG_POD);
	rc |= ng_render_refuse_chain(p, b, NG_CHAIN_REFUSE_EGRESS, NG_COUNTER_EGRESS, "egress", NG_LOG_POD);
	rc |= ng_render_refuse_chain(p, b, NG_CHAIN_REFUSE_INGRESS, NG_COUNTER_INGRESS, "ingress",
				     NG_LOG_POD);
	/* Dropped, never rejected: a reset or ICMP error would go to the
	 * address the pod claimed, a stranger (ng_refuse_rejects). */
	rc |= ng_render_refuse_chain(p, b, NG_CHAIN_REFUSE_SOURCE, NG_COUNTER_SOURCE, "source", NG_LOG_POD);

	rc |= rule_common_head(p, b, eg, true, sets, NG_CHAIN_REFUSE_EGRESS);
	for (int i = 0; i < NG_EGRESS_LOOKUPS; i++)
		for (int f = 0; f < 2; f++)
			rc |= ng_render_egress_lookup(b,
						      (struct ng_lookup_rule){.chain = eg, .nfproto = true},
						      sets, i, f, NG_CHAIN_REFUSE_METADATA);
	rc |= ng_render_lookup_rule(
		b, &(struct ng_lookup_rule){.chain = eg,
					    .set = &sets[NG_S_ND6],
					    .dst = true,
					    .nfproto = true,
					    .comment = "IPv6 neighbour discovery, on-link only"});
	rc |= ng_render_mld_jump(b, &(struct ng_guard_ctx){.chain = eg, .nfproto = true}, p->mld6.n, false);
	ng_rb_begin(&rb, b, eg);
	ng_rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_EGRESS);
	rc |= ng_rb_end(&rb, b, "default deny");

	rc |= rule_common_head(p, b, in, false, sets, NG_CHAIN_REFUSE_INGRESS);
	{
		const struct ng_lookup_rule inbound[] = {
			{.chain = in,
			 .set = &sets[NG_S_IN4],
			 .nfproto = true,
			 .comment = "ingress.ports from ingress.sources (IPv4)"},
			{.chain = in,
			 .set = &sets[NG_S_IN6],
			 .nfproto = true,
			 .comment = "ingress.ports from ingress.sources (IPv6)"},
			{.chain = in,
			 .set = &sets[NG_S_NODE4],
			 .nfproto = true,
			 .l4proto = IPPROTO_TCP,
			 .comment = "the node, any TCP port: kubelet probes (IPv4)"},
			{.chain = in,
			 .set = &sets[NG_S_NODE6],
			 .nfproto = true,
			 .l4proto = IPPROTO_TCP,
			 .comment = "the node, any TCP port: kubelet probes (IPv6)"},
		};
		for (size_t i = 0; i < sizeof(inbound) / sizeof(inbound[0]); i++)
			rc |= ng_render_lookup_rule(b, &inbound[i]);
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
	/* meta len at the output hook: the IPv6 packet, no link header. */
	rc |= ng_render_mld(b, &sets[NG_S_MLD6], 0);
	return rc ? -1 : 0;
}

/* ---- both tables, one transaction ------------------------------------------ */

/* Removes the table of b->family whether it is there or not: creating it
 * if missing makes the delete that follows never fail (ENOENT). */
static int clear_table(struct ng_batch *b, const char *what)
{
	if (ng_render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing") < 0)
		return -1;
	return ng_render_table(b, NFT_MSG_DELTABLE, 0, NULL, what);
}

/* The inet table (created exclusively or anew), then the netdev guard when
 * the policy has it. */
static int render_tables(const struct ng_policy *p, struct ng_batch *b, bool replace)
{
	struct ng_set_spec sets[NG_S_COUNT];
	uint16_t flags = replace ? NLM_F_CREATE : NLM_F_CREATE | NLM_F_EXCL;

	ng_render_set_specs(p, sets);
	b->family = NFPROTO_INET;
	if (replace && clear_table(b, "remove the previous ruleset") < 0)
		return -1;
	if (ng_render_table(b, NFT_MSG_NEWTABLE, flags, p->comment, replace ? "new ruleset" : "create") < 0 ||
	    render_body(p, b, sets) < 0)
		return -1;
	b->family = NFPROTO_NETDEV;
	/* A replace also removes a guard the new policy no longer has. */
	if (replace && clear_table(b, "remove the previous guard") < 0)
		return -1;
	if (p->raw_guard &&
	    (ng_render_table(b, NFT_MSG_NEWTABLE, flags, p->comment, replace ? "new guard" : "create") < 0 ||
	     ng_render_raw_body(p, b, sets) < 0))
		return -1;
	b->family = NFPROTO_INET;
	return 0;
}

int ng_render_create(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	if (render_tables(p, b, false) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the ruleset");
	return ng_batch_finish(b, err);
}

int ng_render_replace(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	if (render_tables(p, b, true) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the ruleset");
	return ng_batch_finish(b, err);
}

int ng_render_delete(struct ng_batch *b, struct ng_err *err)
{
	static const uint8_t families[] = {NFPROTO_INET, NFPROTO_NETDEV};

	for (size_t i = 0; i < sizeof(families); i++) {
		b->family = families[i];
		if (clear_table(b, "delete") < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the delete");
	}
	b->family = NFPROTO_INET;
	return ng_batch_finish(b, err);
}
