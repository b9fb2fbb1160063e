/* `boxxkite-netguard status`: the node view as one table, a pod per line,
 * answering "which pods here are protected" at a glance:
 *
 *   POD            DECISION  TABLES    CHECK          DENIED     NAMES         REASON
 *   sandboxes/s1   enforced  pod+node  in sync 4s     egress=3   *.x.com=2     namespace ...
 *
 * TABLES: which sides are present ("pod", "pod+node", "MISSING pod").
 * CHECK: the agent's last CHECK and its age, or what differed. DENIED:
 * packets per category, all tables summed. NAMES: addresses learned per
 * name entry. A header line says where the view came from. Pure. */
#ifndef NG_STATUSTABLE_H
#define NG_STATUSTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "node/nodeview.h"

void ng_status_table(const struct ng_view *v, int64_t now_ms, const char *source, FILE *out);

#endif
