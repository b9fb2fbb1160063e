/* verify: Live probes from inside the pod's namespace, and its deny counters. */
#ifndef NG_VERIFY_PROBES_H
#define NG_VERIFY_PROBES_H

#include "node/verify_report.h"
#include "kernel/netinfo.h"
#include "kernel/nl.h"

/* Inside the pod's namespace: probes and counters. */
void ng_verify_probe_metadata(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni);
void ng_verify_probe_dns(struct run *r);
void ng_verify_probe_denied(struct run *r);
void ng_verify_counters(struct run *r, struct ng_nl *nl);

#endif
