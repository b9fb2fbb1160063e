/* verify: DNS queries (dns.queries "listed", README "DNS queries"). */
#ifndef NG_VERIFY_DNSQ_H
#define NG_VERIFY_DNSQ_H

#include "kernel/nl.h"
#include "node/verify_report.h"

/* Inside the pod's namespace, for a pod whose queries are checked: a
 * query for a name no policy lists, to each resolver over UDP, must get
 * the local refusal (the policy's rcode, the probe's ID and question) and
 * never reach the resolver. The proof it did not leave is the pod's own
 * conntrack table: a query that left is a flow to the resolver's port 53
 * whose answer is its reply; the agent's answer to a query it dropped
 * before it left arrives as a flow of its own, to the probe's port. */
void ng_verify_dns_unlisted(struct run *r, struct ng_nl *nl);

#endif
