/* hostMirror for the verbs: which host-side table an attachment has,
 * whether ADD/CHECK can have one (README "Host-side table"), and GC of the
 * host-side tables. Both sides are changed through kernel/podtables.h. */
#ifndef NG_HOSTMIRROR_H
#define NG_HOSTMIRROR_H

#include <jansson.h>
#include <stddef.h>

#include "base/decision_log.h"
#include "base/err.h"
#include "kernel/nl.h"
#include "policy/config.h"
#include "policy/policy.h"

/* The host-side table's name for the attachment; code 4 when the container
 * id and interface name cannot make one. */
int ng_hostmirror_table(const char *container_id, const char *ifname, char *buf, size_t len,
			struct ng_err *err);

/* Reads the pod's link (in `pod_fd`'s namespace, into *link: what the
 * record keeps, so that no later rebuild reads the pod again) and plans both sides.
 * `recorded` (a pod already recorded: a retried ADD, CHECK) is planned
 * with instead, never the live link: how the live one differs goes to
 * `drift` and the decision log ("" none), and *link is the recorded. Then:
 * link-local sources always; the host-side table as hostMirror says.
 * "required" without a per-pod host device: code 103 naming the
 * interface; "auto": planned without it, the reason in the decision log.
 * `prev` (prevResult, may be NULL): its host interfaces are only a hint;
 * when none of them is the peer the kernel names, the log says so. */
int ng_hostmirror_plan(const struct ng_config *cfg, int pod_fd, const char *ifname, const json_t *prev,
		       const struct ng_link_facts *recorded, struct ng_policy *p, struct ng_link_facts *link,
		       char *drift, size_t drift_len, struct ng_log *log, struct ng_err *err);

/* ADD, both sides (kernel/podtables.h). */
int ng_hostmirror_add(struct ng_nl *pod_nl, const struct ng_policy *p, const char *host_table,
		      struct ng_err *err);

/* DEL, both sides (kernel/podtables.h); the owner of tables left in place
 * goes to the decision log. */
int ng_hostmirror_del(const char *netns_path, const char *container_id, const char *ifname,
		      const char *host_table, struct ng_log *log, const char **what, struct ng_err *err);

/* GC: removes the host-side tables of this network whose attachment is not
 * in stdin's cni.dev/valid-attachments (all of them are kept when the key
 * is missing) and those whose device is gone. */
int ng_hostmirror_gc(const json_t *root, const char *network, struct ng_log *log, struct ng_err *err);

#endif
