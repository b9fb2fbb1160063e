/* The pod's live connections, from its own conntrack table (ctnetlink over
 * the agent's netfilter socket in the pod's namespace): a learned address
 * that a live connection uses is kept alive in the stateless tables too. */
#ifndef NG_CTDUMP_H
#define NG_CTDUMP_H

#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"

/* Calls fn for every conntrack entry of the socket's namespace that is a
 * live flow (UDP, or TCP not yet in TIME_WAIT/CLOSE), with its original
 * destination. 0 or -1 with err. */
typedef void (*ng_ct_fn)(const struct ng_ip *dst, uint8_t proto, uint16_t dport, void *data);
int ng_ct_flows(struct ng_nl *nl, ng_ct_fn fn, void *data, struct ng_err *err);

#endif
