/* Refusals every table makes, as small builders shared by the inet policy
 * table, the netdev packet-socket guard and the host-side table: metadata
 * in IPv6 forms with free bits, packets that name their own route, MLD
 * reports carrying anything but the pod's own groups. */
#ifndef NG_RENDER_GUARD_H
#define NG_RENDER_GUARD_H

#include <stdbool.h>

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

/* MLDv2 reports as the kernel writes them, one record naming one of the
 * pod's own solicited-node groups (`groups`), nothing else; one rule each:
 *   ip6 version/class/flow 0x60000000, payload length 36, next header
 *   hop-by-hop, hop limit 1, daddr ff02::16, the hop-by-hop header exactly
 *   the kernel's router alert, ICMPv6 143 code 0, reserved 0, 1 record of
 *   type 1-6 with no aux data and no sources, its group GROUP, and (meta
 *   len) no byte more: accept.
 * The kernel joins each solicited-node group alone (one record); reports
 * of several records answer queries, which the ingress chain drops.
 * `link_hdr`: bytes before the IPv6 header in meta len (14 in netdev). */
int ng_render_mld(struct ng_batch *b, const struct ng_guard_ctx *c, const ng_ip_vec *groups,
		  unsigned link_hdr);

#endif
