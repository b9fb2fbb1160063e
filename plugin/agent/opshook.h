/* Where the agent's main loop meets the ops thread (agent/ops.h): the
 * counters and socket port ids it publishes once a second and after each
 * pickup, and the pods it re-commits after a repair. */
#ifndef NG_OPSHOOK_H
#define NG_OPSHOOK_H

#include "agent/agent.h"

void ng_agent_ops_publish(struct ng_agent *a);
/* The relearn eventfd fired: re-commit each repaired pod's learned set
 * elements (the repair replaced its table, with empty name sets). */
void ng_agent_ops_relearn(struct ng_agent *a);

#endif
