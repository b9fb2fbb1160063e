/* `boxxkite-netguard status`: the node view as one table, a pod per line,
 * answering "which pods here are protected" at a glance:
 *
 *   agent: serving, version 0.3.0, ready, generation 42, view 0s old
 *   pods: 2: 1 enforced (1 in-sync, 0 differ, 0 cannot-check, 0 not-yet), 1 skipped, 0 refused
 *   POD           DECISION  TABLES    CHECK         DENIED    NAMES          REASON
 *   sandboxes/s1  enforced  pod+node  in-sync(4s)   egress=3  *.x.com=2      namespace ...
 *
 * TABLES: which sides are present ("pod", "pod+node", "MISSING pod").
 * CHECK: the agent's last CHECK and its age, or what differed. DENIED:
 * packets per category, all tables summed. NAMES: addresses learned per
 * name entry. Columns as wide as their widest cell. Pure. */
#ifndef NG_STATUSTABLE_H
#define NG_STATUSTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "node/nodeview.h"

/* Where the view came from, for the header. */
struct ng_status_source {
	bool from_agent;     /* the agent's published view */
	bool agent_running;  /* an agent holds stateDir's lock */
	const char *version; /* this binary's */
};

/* The pods by state; "differ" counts a missing table too. */
struct ng_status_sum {
	size_t pods, enforced, in_sync, differs, cannot_check, not_yet, skipped, refused, other;
	size_t audited; /* of the enforced, in audit mode */
};
void ng_status_sum(const struct ng_view *v, struct ng_status_sum *s);

/* `status`'s exit code: 3 when an enforced pod's tables are missing or
 * differ, else 4 when one could not be checked (or not yet), else 0. */
int ng_status_exit(const struct ng_status_sum *s);

/* Two header lines (the agent: serving or not, its version, ready or why
 * not, generation, the view's age; the pods by state), then the table. */
void ng_status_table(const struct ng_view *v, int64_t now_ms, const struct ng_status_source *src, FILE *out);

#endif
