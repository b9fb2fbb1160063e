/* The keep-alive's lookup (agent/keepalive.h): the live flows to one
 * address, from the pod's own conntrack table by a filtered dump (ctnetlink
 * over a netfilter socket in the pod's namespace). kernel/ctdump.h lists
 * or cuts every flow. */
#ifndef NG_CTLOOKUP_H
#define NG_CTLOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"

/* The live flows (UDP, or TCP not yet in TIME_WAIT/CLOSE) of the socket's
 * namespace whose original destination is `dst` with protocol `proto`,
 * each through fn with its destination port until fn returns false
 * (enough), at most `budget` entries read. A filtered dump (CTA_FILTER on
 * the destination address and protocol, Linux 5.8+): a pod's other
 * entries, however many, are never copied out; a kernel without the
 * filter sends them all, and they are skipped here (and count against the
 * budget). Returns the entries read, or -1 with err. *cut: stopped before
 * the end (fn had enough, or the budget): the socket's dump is left
 * unfinished (kernel/nl.h: close it, or the next dump drains it). */
typedef bool (*ng_ct_port_fn)(uint16_t dport, void *data);
int ng_ct_flows_to(struct ng_nl *nl, const struct ng_ip *dst, uint8_t proto, unsigned budget,
		   ng_ct_port_fn fn, void *data, bool *cut, struct ng_err *err);

#endif
