/* Does a pod's policy admit a live flow? What a re-plan of a running pod
 * (a grant withdrawn, a live policy change: agent/replan.h) asks of every
 * flow in the pod's conntrack table: the `ct state established` rule
 * would keep a flow open that the new tables no longer admit, so such a
 * flow is cut; a flow both policies admit is never touched. Pure.
 *
 * The flow is the conntrack entry's original direction, as the pod's own
 * namespace sees it:
 *   - local (a loopback address, or the pod to one of its own addresses):
 *     admitted, the tables accept loopback;
 *   - to cloud metadata: never admitted (refused in every mode);
 *   - an audited pod (enforce.auditNamespaces): everything else admitted;
 *   - inbound (to one of the pod's addresses): TCP from an ingress source
 *     to its port, or from the node when ingress.allowNode;
 *   - outbound: to a DNS server (its protocol, port 53), an allowed or
 *     granted address, an address learned for a name entry and carried
 *     into the new tables (p->learned: ng_podlock_learned filled it), or a
 *     resolved name's address (egress.names "resolve": the re-plan asked
 *     the names again, as a repair does; an address a name no longer
 *     resolves to is not admitted, and the host-side table, stateless,
 *     would drop its packets anyway). */
#ifndef NG_ADMITS_H
#define NG_ADMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "policy/policy.h"

struct ng_flow {
	struct ng_ip src, dst;
	uint8_t proto; /* NG_PROTO_TCP or NG_PROTO_UDP */
	uint16_t dport;
};

bool ng_policy_admits(const struct ng_policy *p, const struct ng_flow *f);

/* Does `now` admit every flow `old` admits (so a re-plan from `old` to
 * `now` has nothing to cut, and need not list the pod's conntrack table,
 * whose dump walks the node's whole table)? Conservative: true only when
 * each admitting element of `old` lies inside one of `now`'s (addresses,
 * protocol, ports), its learned names are carried (a name entry of `now`
 * covers each of `old`'s protocol and ports), `now` refuses no metadata
 * address `old` did not, an audited `old` is audited still, and no name
 * is resolved again (egress.names "resolve": its addresses may move). */
bool ng_policy_covers(const struct ng_policy *now, const struct ng_policy *old);

#endif
