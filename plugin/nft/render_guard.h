/* Refusals every table makes, as small builders shared by the inet policy
 * table, the netdev packet-socket guard and the host-side table: metadata
 * in IPv6 forms with free bits, packets that name their own route (the
 * MLD reports every table lets out: nft/render_mld.h). */
#ifndef NG_RENDER_GUARD_H
#define NG_RENDER_GUARD_H

#include <stdbool.h>
#include <stdint.h>

#include "nft/batch.h"
#include "nft/render_sets.h"

/* Where the rules go and how they check the family: `meta nfproto` (inet)
 * or `meta protocol` (netdev); `refuse` is the chain a refused packet
 * jumps to (its counter says how many). */
struct ng_guard_ctx {
	const char *chain;
	bool nfproto, protocol;
	const char *refuse;
};

/* exthdr rt exists jump REFUSE               (IPv6 routing header, any type)
 * ip option lsrr exists jump REFUSE          (IPv4 loose source route)
 * ip option ssrr exists jump REFUSE          (IPv4 strict source route)
 * In the netdev family (c->protocol) the two IPv4 rules are one:
 * ip hdrlength != 5 jump REFUSE (the kernel cannot find options there).
 * `fam`: 4, 6, or 0 for both. */
int ng_render_no_source_route(struct ng_batch *b, const struct ng_guard_ctx *c, int fam);

/* One rule per form of policy/metadata.h:
 * ip6 daddr & MASK @metadata_v6_embedded jump REFUSE */
int ng_render_metadata_forms(struct ng_batch *b, const struct ng_guard_ctx *c,
			     const struct ng_set_spec *embedded);

/* The packet is of family `fam` (NG_V4, NG_V6), checked as c says. */
struct ng_rb;
void ng_guard_family_is(struct ng_rb *rb, const struct ng_guard_ctx *c, uint8_t fam);

#endif
