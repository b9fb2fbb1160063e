/* The pod's live connections, from its own conntrack table (ctnetlink over
 * the agent's netfilter socket in the pod's namespace): a learned address
 * that a live connection uses is kept alive in the stateless tables too. */
#ifndef NG_CTDUMP_H
#define NG_CTDUMP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"
#include "policy/admits.h"

/* Calls fn for every conntrack entry of the socket's namespace that is a
 * live flow (UDP, or TCP not yet in TIME_WAIT/CLOSE), with its original
 * destination. 0 or -1 with err. */
typedef void (*ng_ct_fn)(const struct ng_ip *dst, uint8_t proto, uint16_t dport, void *data);
int ng_ct_flows(struct ng_nl *nl, ng_ct_fn fn, void *data, struct ng_err *err);

/* Deletes (IPCTNL_MSG_CT_DELETE, by the whole original tuple and zone)
 * every live flow of the socket's namespace for which `cut` says true
 * (given the original direction's addresses, protocol and destination
 * port): what a re-plan no longer admits must not outlive it (the
 * `ct state established` rule would keep it open; policy/admits.h). The flows are listed
 * first, then deleted one request each; a flow that ended meanwhile
 * (ENOENT) is no error. *n: how many were deleted. 0 or -1 with err. */
typedef bool (*ng_ct_cut_fn)(const struct ng_flow *f, void *data);
int ng_ct_cut(struct ng_nl *nl, ng_ct_cut_fn cut, void *data, unsigned *n, struct ng_err *err);

#endif
