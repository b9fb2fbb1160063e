/* The pieces both tables are made of (render.c: the inet policy table;
 * render_raw.c: the netdev packet-socket guard): table, chain and counter
 * messages, the refuse chains, the lookup rules, and the set list filled
 * from a policy. Messages go to the family in b->family. */
#ifndef NG_RENDER_OBJS_H
#define NG_RENDER_OBJS_H

#include <stdbool.h>
#include <stdint.h>

#include "nft/batch.h"
#include "nft/render_log.h"
#include "policy/policy.h"
#include "nft/render_sets.h"

/* The sets of the ruleset, in the order they are created. */
enum {
	NG_S_META4,
	NG_S_META6,
	NG_S_META6E, /* metadata_v6_embedded */
	NG_S_DNS4,
	NG_S_DNS6,
	NG_S_ALLOW4,
	NG_S_ALLOW6,
	NG_S_NAMES4,
	NG_S_NAMES6,
	NG_S_TTL4,
	NG_S_TTL6,
	NG_S_ND6,
	NG_S_IN4,
	NG_S_IN6,
	NG_S_NODE4,
	NG_S_NODE6,
	NG_S_SRC4, /* the pod's own addresses: the only sources it may send from */
	NG_S_SRC6,
	NG_S_MLD6, /* the groups an MLDv2 report may name (nft/render_mld.h) */
	NG_S_COUNT
};

/* Fills `sets` (names, key layouts, contents) from `p`. */
void ng_render_set_specs(const struct ng_policy *p, struct ng_set_spec sets[NG_S_COUNT]);

/* The counter a refuse chain counts into: `counter` ("egress_denied"), or
 * in an audited table "egress_would_deny" (metadata's never changes). */
#define NG_COUNTER_NAME_MAX 64
const char *ng_refuse_counter(const struct ng_policy *p, const char *counter, bool metadata, char *buf,
			      size_t len);
/* The category a counter counts ("egress" of "egress_denied" and of
 * "egress_would_deny"); *would_deny set for the second. */
void ng_counter_category(const char *counter, char *out, size_t len, bool *would_deny);
/* Declares the counter ng_refuse_counter names for a non-metadata chain. */
int ng_render_refuse_counter(const struct ng_policy *p, struct ng_batch *b, const char *counter);

/* A refuse chain of table t: count; with p->nflog, jump to its log chain
 * (nft/render_log.h: rate-limited per table, what the limit holds back
 * counted); then reject with a TCP reset or ICMP admin-prohibited (a
 * blocked connect fails at once) or drop, as ng_refuse_rejects says, with
 * the comment ng_refuse_verdict_comment writes. Audited (p->audit), unless
 * `category` is "metadata": count into the *_would_deny counter, log
 * "netguard would_deny <category>", accept. */
int ng_render_refuse_chain(const struct ng_policy *p, struct ng_batch *b, const char *chain,
			   const char *counter, const char *category, enum ng_log_table t);

/* `[meta l4proto P] [meta nfproto F] [tcp flags & (syn|ack) != syn]
 * <key> @set [@also] accept` (or `jump <jump>`). */
struct ng_lookup_rule {
	const char *chain;
	const struct ng_set_spec *set, *also;
	bool dst;              /* the destination address (egress) or the source */
	bool nfproto;          /* check meta nfproto (inet) */
	bool protocol;         /* check meta protocol (netdev: nft then shows "ip daddr", not "@nh,128,32") */
	bool sport;            /* addr . port sets: the source port (replies from a listening port) */
	bool no_syn_only;      /* TCP replies only: a segment with SYN and no ACK never passes */
	bool invert;           /* `!= @set`: not in the set */
	bool from_unspecified; /* IPv6 only: ip6 saddr :: (DAD, MLD before an address exists) */
	bool queue;            /* the verdict: NFQUEUE NG_AGENT_QUEUE (to the agent), no bypass */
	bool observe;          /* before the verdict: a copy to NG_OBSERVE_GROUP (the node-side observer) */
	bool no_verdict;       /* none: the next rule decides */
	bool not_invalid;      /* ct state != invalid first (conntrack's own drop stays first) */
	uint8_t l4proto;       /* check it (NG_SK_ADDR sets; the others imply theirs) */
	const char *jump;      /* the verdict: jump to this chain; NULL: accept */
	const char *comment;
};
int ng_render_lookup_rule(struct ng_batch *b, const struct ng_lookup_rule *r);

/* The source checks every table makes, from the template `r` (chain and
 * family check): neighbour discovery from `::` accepted (duplicate address
 * detection sends from it) and MLD reports from `::` handed to the MLD
 * chains (the kernel reports while its address is tentative), then
 * `ip saddr != @source_v4` and
 * `ip6 saddr != @source_v6` jump `refuse`. A spoofed source never leaves,
 * whatever its destination: a resolver's answer to it would carry data to
 * a stranger. */
int ng_render_source_rules(struct ng_batch *b, struct ng_lookup_rule r, const struct ng_set_spec *sets,
			   const char *refuse, int f);
#define NG_BOTH_FAMILIES (-1) /* `f` of ng_render_source_rules: IPv4 and IPv6 */

/* The egress lookups both tables make, in this order, so that the
 * packet-socket guard mirrors the policy by construction: metadata
 * (refused), DNS, allow, names (resolved: the pinned set and its _ttl
 * twin; learned: the single-port set), names with port ranges (learned
 * only; the lookup renders nothing otherwise). */
#define NG_EGRESS_LOOKUPS 5
/* Egress lookup i for family f (0: IPv4, 1: IPv6), from the template `r`
 * (chain and family check): the sets, the destination, the comment, and
 * for metadata a jump to `refuse`. */
int ng_render_egress_lookup(struct ng_batch *b, struct ng_lookup_rule r, const struct ng_set_spec *sets,
			    int i, int f, const char *refuse);

#endif
