/* Both sides of a pod's enforcement as one unit: the host-side table in the
 * node's namespace (kernel/hostside.h) and the pod's own tables
 * (kernel/ruleset.h). ADD, a repair and DEL change them through here, so
 * the order that keeps a pod fail-closed is written once: the side the pod
 * cannot touch is built first and removed last. Each change is one
 * transaction per namespace. */
#ifndef NG_PODTABLES_H
#define NG_PODTABLES_H

#include <stddef.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "policy/policy.h"

/* The host side first (when p->host; when not, this attachment's host
 * table from an earlier ADD goes), then the pod's over `pod_nl`. A failure
 * of the pod's side removes the host side again. `node_nl` may be NULL (a
 * socket of its own); a long-lived caller passes its own so that it knows
 * the port id its commits come from. Nothing else of the node is read
 * (kernel/hostside.h): the cost does not grow with its pods. */
int ng_podtables_apply(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
		       const char *host_table, struct ng_err *err);

/* The agent's repair or re-plan of a running pod: the same two
 * transactions, each a replace whether or not the table is there (no
 * exclusive create first: kernel/ruleset.h), the host side first. A
 * failure of the pod's side leaves the host side as applied: the pod is
 * then held by both policies at once (and its CHECK differs), never by
 * neither. */
int ng_podtables_replace(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
			 const char *host_table, struct ng_err *err);

/* DEL: the pod's tables when the namespace `netns_path` (may be NULL) is
 * still there and they are attachment (container_id, ifname)'s, then the
 * host-side table by name. Both deletions are committed before either
 * socket closes, so the kernel frees both in one RCU grace period. `what`
 * says what happened (for the decision log); `owner` receives the comment
 * of tables left because they are another attachment's ("" otherwise). */
int ng_podtables_delete(const char *netns_path, const char *container_id, const char *ifname,
			const char *host_table, const char **what, char *owner, size_t owner_len,
			struct ng_err *err);

/* CHECK's node side: `host_table` is exactly what `p` renders to.
 * `node_nl` may be NULL (a socket of its own). */
int ng_podtables_check_host(struct ng_nl *node_nl, const struct ng_policy *p, const char *host_table,
			    struct ng_err *err);

#endif
