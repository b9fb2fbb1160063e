/* Pinning the pod's gateways (issue 13 item 8): a neighbour in the pod's
 * segment that is not enforced, holding NET_RAW, can poison the pod's ARP
 * (or ND) entry for its gateway, then take the replies the pod sends "to
 * the node" and so connect as the node (allowNode) or as any routed ingress
 * source. At ADD each gateway whose link-layer address the node itself
 * holds (the bridge's address, a ptp host veth's) becomes a PERMANENT
 * neighbour entry on the pod's interface, which no ARP reply, gratuitous
 * ARP or ND override can change. */
#ifndef NG_NEIGHPIN_H
#define NG_NEIGHPIN_H

#include <stddef.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"

/* Finds, in the current (node's) namespace, the MAC of the interface that
 * holds each of `gws` (n of them), then, inside the pod's namespace
 * `pod_netns_fd`, replaces the neighbour entry of each one found on
 * `ifname` with a permanent one. `*pinned` counts them; gateways the node
 * does not hold (a router elsewhere, proxy ARP) are left as they are. */
int ng_neigh_pin_gateways(int pod_netns_fd, const char *ifname, const struct ng_ip *gws, size_t n,
			  size_t *pinned, struct ng_err *err);

/* The same over rtnetlink transports already open: `node` in the node's
 * namespace (its addresses and links are read), `pod` in the pod's (the
 * entries are written there). What ng_neigh_pin_gateways does once it has
 * opened them (tests hand it a fake kernel). */
int ng_neigh_pin(struct ng_nl *node, struct ng_nl *pod, const char *ifname, const struct ng_ip *gws, size_t n,
		 size_t *pinned, struct ng_err *err);

#endif
