/* verify: The pod's table against the policy the config compiles to. */
#ifndef NG_VERIFY_TABLE_H
#define NG_VERIFY_TABLE_H

#include "node/verify_report.h"
#include "kernel/netinfo.h"
#include "kernel/nl.h"

/* Inside the pod's namespace: the table, and the policy comparison. */
void ng_verify_table(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni);

#endif
