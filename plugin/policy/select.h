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
int ng_select(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
	      bool *enforced, bool *audit, char *reason, size_t reason_len, struct ng_err *err);

#endif
