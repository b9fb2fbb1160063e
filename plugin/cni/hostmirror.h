/* hostMirror for the verbs: which host-side table an attachment has, and
 * whether ADD/CHECK can have one (README "Host-side table"). */
#ifndef NG_HOSTMIRROR_H
#define NG_HOSTMIRROR_H

#include <jansson.h>
#include <stddef.h>

#include "base/decision_log.h"
#include "base/err.h"
#include "policy/config.h"
#include "kernel/nl.h"
#include "policy/policy.h"

/* The host-side table's name for the attachment; code 4 when the container
 * id and interface name cannot make one. */
int ng_hostmirror_table(const char *container_id, const char *ifname, char *buf, size_t len,
			struct ng_err *err);

/* Reads the pod's link (in `pod_fd`'s namespace) and plans both sides:
 * link-local sources always; the host-side table as hostMirror says.
 * "required" without a per-pod host device: code 103 naming the
 * interface; "auto": planned without it, the reason in the decision log.
 * `prev` (prevResult, may be NULL): its host interfaces are only a hint;
 * when none of them is the peer the kernel names, the log says so. */
int ng_hostmirror_plan(const struct ng_config *cfg, int pod_fd, const char *ifname, const json_t *prev,
		       struct ng_policy *p, struct ng_log *log, struct ng_err *err);

/* ADD, both sides, one transaction each: the host side first (when
 * planned; when not, this attachment's host table from an earlier ADD goes),
 * then the pod's over `pod_nl`. A SIGKILL between the two leaves
 * the side the pod cannot touch (fail closed; the retried ADD or the DEL
 * converges). A failure of the pod's side removes the host side again, so
 * a failed ADD leaves neither. */
int ng_hostmirror_add(struct ng_nl *pod_nl, const struct ng_policy *p, const char *host_table,
		      struct ng_log *log, struct ng_err *err);
/* The same over a node-namespace socket the caller holds (NULL: one of its
 * own), so that a long-lived caller (the agent's repair) commits from a
 * port id it knows as its own. */
int ng_hostmirror_add_on(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
			 const char *host_table, struct ng_log *log, struct ng_err *err);

/* DEL: the host-side table by name, and the pod's tables when the
 * namespace is still there and they are this attachment's. `what` says
 * what happened, for the decision log. */
int ng_hostmirror_del(const char *netns_path, const char *container_id, const char *ifname,
		      const char *host_table, struct ng_log *log, const char **what, struct ng_err *err);

/* CHECK's node side: the host-side table is what `p` renders to. */
int ng_hostmirror_check(const struct ng_policy *p, const char *host_table, struct ng_err *err);

/* GC: removes the host-side tables of this network whose attachment is not
 * in stdin's cni.dev/valid-attachments (all of them are kept when the key
 * is missing) and those whose device is gone. */
int ng_hostmirror_gc(const json_t *root, const char *network, struct ng_log *log, struct ng_err *err);

#endif
