/* Which pods are enforced: a pure decision with its reason in words. */
#ifndef NG_SELECT_H
#define NG_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/annotations.h"
#include "policy/config.h"

/* Pods in enforce.namespaces are enforced whatever their annotations say;
 * elsewhere, netguard.boxxkite.io/enforce: "true" opts in when the config
 * allows it. A pod that asks for enforcement on a node that cannot give it
 * fails (code 102) rather than run unprotected. Pods in
 * enforce.auditNamespaces (and not selected by the two above) are enforced
 * with *audit set: their tables count and log what they would refuse and
 * let it through, cloud metadata excepted. */
/* The least a running pod keeps when a new plugin entry (live policy,
 * agent/livepolicy.h) would select it less: a pod is never moved from
 * enforce to audit, nor from either to unselected, while it runs (until
 * its DEL); it only ever tightens (audit to enforce). Ordered. */
enum ng_keep { NG_KEEP_NONE, NG_KEEP_AUDIT, NG_KEEP_ENFORCE };

int ng_select(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
	      bool *enforced, bool *audit, char *reason, size_t reason_len, struct ng_err *err);

/* ng_select, then `keep` as the floor: a pod the entry selects less than
 * `keep` (or refuses to select: an opt-in the entry no longer allows) is
 * kept at `keep`, and the reason says so. */
int ng_select_kept(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
		   enum ng_keep keep, bool *enforced, bool *audit, char *reason, size_t reason_len,
		   struct ng_err *err);

#endif
