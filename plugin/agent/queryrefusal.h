/* What a query the pod may not ask leaves behind (agent/query.h judges
 * it): a log line, at most once per name per pod per minute and
 * NG_REFUSAL_LOG_BURST lines a minute, the name cut to 60 bytes (it may
 * carry data); an event for the flow log (`observe`) within the pod's log
 * rate; `would`: an audited pod's, sent on as would_deny, not refused. */
#ifndef NG_AGENT_QUERYREFUSAL_H
#define NG_AGENT_QUERYREFUSAL_H

#include <stdbool.h>

#include "agent/packet.h"
#include "agent/pod.h"
#include "policy/dnsquery.h"

void ng_query_refusal_seen(struct ng_pod *p, const struct ng_pkt *k, const struct ng_dns_query *q,
			   enum ng_dnsq_verdict v, bool tcp, bool would);

/* The rcode the agent's answer to a query refused for verdict v carries
 * ("NXDOMAIN", "FORMERR", ...; "nothing" when none is sent). */
const char *ng_query_refusal_answer(const struct ng_pod *p, enum ng_dnsq_verdict v);

#endif
