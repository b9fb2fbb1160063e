/* The node view as JSON: what the agent publishes in stateDir/status.json
 * (rewritten atomically after each look at the kernel) and what
 * `boxxkite-netguard status --json` prints. Pure. */
#ifndef NG_STATUSJSON_H
#define NG_STATUSJSON_H

#include <jansson.h>

#include "base/err.h"
#include "node/nodeview.h"

#define NG_STATUS_FILE "status.json"

json_t *ng_status_to_json(const struct ng_view *v);
/* Reads the pods (and the agent's fields) back; 0 or -1 with err. */
int ng_status_from_json(const json_t *o, struct ng_view *v, struct ng_err *err);

#endif
