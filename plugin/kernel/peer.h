/* The host side of the pod's link, found from the pod's side and proved
 * from the node's: the pod's interface names its peer by IFLA_LINK (an
 * ifindex of ANOTHER namespace: indexes collide across namespaces) and
 * IFLA_LINK_NETNSID (that namespace, as the pod's namespace numbers it).
 * The peer counts only when that namespace is the node's own (the one this
 * process runs in) and the device there is a veth whose own link points
 * back at the pod's interface in the pod's namespace. prevResult's host
 * interface is never trusted for this (a hint at most). */
#ifndef NG_PEER_H
#define NG_PEER_H

#include <stddef.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "policy/policy.h"

/* Reads the pod's interface `ifname` in namespace `pod_netns_fd` (its MAC,
 * link-local addresses, kind) and its per-pod host device, if any, into
 * `out` (out->peer "" when there is none, with the reason in `why`).
 * -1 with err (code 112) when the interface is not there or netlink fails. */
int ng_peer_find(int pod_netns_fd, const char *ifname, struct ng_link_facts *out, char *why, size_t why_len,
		 struct ng_err *err);

/* The proof itself, over rtnetlink transports `pod` (in the pod's
 * namespace) and `node` (in the node's); `pod_ns` and `node_ns` are the
 * two namespaces' fds, which RTM_GETNSID names to the kernel. What
 * ng_peer_find does once it has opened them (tests hand it a fake kernel). */
int ng_peer_prove(struct ng_nl *pod, struct ng_nl *node, int pod_ns, int node_ns, const char *ifname,
		  struct ng_link_facts *out, char *why, size_t why_len, struct ng_err *err);

/* The pod's side only, over `nl`: the MAC, ifindex and link-local
 * addresses of `ifname`; no peer. -1 with err (code 112). */
int ng_link_read(struct ng_nl *nl, const char *ifname, struct ng_link_facts *out, struct ng_err *err);

/* The pod's side only, in the current namespace (verify runs inside it):
 * the MAC and link-local addresses of `ifname`; no peer. -1 with err. */
int ng_link_read_here(const char *ifname, struct ng_link_facts *out, struct ng_err *err);

#endif
