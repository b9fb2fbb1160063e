/* MLDv2 reports as the kernel writes them for the pod's own solicited-node
 * groups, in every table (the inet policy, the packet-socket guard, the
 * host side), and no other multicast report:
 *
 *   [ip6 saddr ::] ip6 version 6, class 0, flow 0, next header hop-by-hop,
 *     hop limit 1, daddr ff02::16, the hop-by-hop header exactly the
 *     kernel's router alert and PadN, ICMPv6 143 code 0, reserved 0
 *     jump mld_report
 *   chain mld_report   { record 1 ok goto mld_report_1 }
 *   chain mld_report_N { N records (count field), payload length 16 + 20N,
 *                          meta len LINK + 56 + 20N: accept
 *                        record N+1 ok goto mld_report_N+1 }   N = 1 .. G
 *   where "record K ok" is: type 2-4, no aux data, no source, the group
 *   @mld_v6 (the pod's G solicited-node groups, policy/policy.c add_mld).
 *
 * Why several records: the kernel puts every group whose state changed in
 * one report (net/ipv6/mcast.c mld_send_cr: the link-local and the global
 * address's groups, joined together at link-up), and after duplicate
 * address detection one report with a record for every group it is in
 * (mld_send_initial_cr), each sent mc_qrv (2) times. Why these types: for a
 * group the kernel joined itself (exclude mode, no source) it writes
 * CHANGE_TO_EXCLUDE (4) when joining, CHANGE_TO_INCLUDE (3) when leaving
 * (an address removed) and MODE_IS_EXCLUDE (2) answering a query; 1, 5 and 6
 * are for include mode or carry sources. Why from ::: the kernel reports
 * from :: while its link-local address is tentative (mld_newpack). A report
 * naming any other group, or with any byte the kernel would not write,
 * matches nothing here and falls back to the default deny (counted). */
#ifndef NG_RENDER_MLD_H
#define NG_RENDER_MLD_H

#include <stdbool.h>

#include "nft/batch.h"
#include "nft/render_guard.h"
#include "nft/render_sets.h"

#define NG_MLD_CHAIN      "mld_report"
/* The key of set mld_v6: `typeof @nh,480,128`, record 1's group. The set
 * holds raw 16-byte keys because the rules look the group up at every
 * record's offset, which a set of type ipv6_addr would not read back
 * through `nft -f` (a raw payload has no address type). */
#define NG_MLD_GROUP_BITS 480

/* Declares chain mld_report and mld_report_1 .. mld_report_<groups> (none
 * when the pod has no group: then no report leaves at all). */
int ng_render_mld_chains(struct ng_batch *b, size_t groups);

/* The rule in c->chain that hands a report in the kernel's header layout
 * to mld_report; from_unspecified: only from `::` (placed before the source
 * check, which refuses ::). Nothing when `groups` is 0. */
int ng_render_mld_jump(struct ng_batch *b, const struct ng_guard_ctx *c, size_t groups,
		       bool from_unspecified);

/* The rules of the chains, `set` being mld_v6. `link_hdr`: bytes before
 * the IPv6 header in meta len (14 on the netdev egress hook; 0 in the inet
 * family and on netdev ingress, where the Ethernet header was pulled). */
int ng_render_mld(struct ng_batch *b, const struct ng_set_spec *set, unsigned link_hdr);

#endif
