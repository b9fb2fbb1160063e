/* What the ops thread tells the flow thread (agent/flow.h): the enforced
 * pods it watches, as the flow log reads them (node/flowsrc.h), whenever
 * that list changes. The ops thread already reads every record and
 * compiles every enforced pod's policy; the flow thread does not read
 * stateDir a second time. */
#ifndef NG_OPSFLOW_H
#define NG_OPSFLOW_H

#include <stddef.h>
#include <stdint.h>

#include "agent/flow.h"
#include "agent/opspod.h"

/* Hands the list over when it differs from the one behind *last (a hash
 * of what the flow log reads of each pod); updates *last. */
void ng_opsflow_publish(struct ng_flow *flow, struct ng_opod *const *pods, size_t n, uint64_t *last);

#endif
