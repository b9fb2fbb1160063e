/* The one path from a plugin entry to a pod's policy, shared by ADD, CHECK
 * and verify, so the three can never disagree on what a pod gets: the pod's
 * annotations, the selection with its reason in words, the addresses of its
 * DNS names (ADD only: CHECK and verify do not ask DNS again), and, when the
 * pod is enforced, the compiled policy. Pure: the resolver is a callback. */
#ifndef NG_POD_POLICY_H
#define NG_POD_POLICY_H

#include <jansson.h>
#include <stdbool.h>

#include "spec/prevresult.h"
#include "policy/annotations.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "policy/select.h"

/* Fills `out` with the addresses of `names`; 0, or -1 with err. */
typedef int (*ng_names_fn)(const ng_name_list *names, ng_resolved *out, void *ctx, struct ng_err *err);

struct ng_pod_policy {
	bool enforced;
	bool audit;       /* enforced in audit mode (enforce.auditNamespaces) */
	char reason[512]; /* why enforced or skipped, for the decision log */
	struct ng_annotations ann;
	ng_resolved resolved;
	struct ng_policy policy; /* set when enforced */
};

enum {
	NG_POD_REFUSED = -1, /* the pod's config or annotations are refused (log "refused") */
	NG_POD_ERROR = -2,   /* the names could not be resolved (log "error") */
};

/* Decides and compiles. `entry` is the entry as the runtime passed it (its
 * runtimeConfig holds the annotations); `resolve` may be NULL (no names are
 * asked). Returns 0, NG_POD_REFUSED or NG_POD_ERROR with err. `out` is
 * always to be freed with ng_pod_policy_free. */
int ng_pod_policy_build(const json_t *entry, const struct ng_config *cfg, const struct ng_prev *prev,
			const struct ng_podref *pod, ng_names_fn resolve, void *ctx,
			struct ng_pod_policy *out, struct ng_err *err);
/* The same for a running pod whose record says it is kept at least at
 * `keep` (policy/select.h: a live policy change never selects a running
 * pod less). */
int ng_pod_policy_build_kept(const json_t *entry, const struct ng_config *cfg, const struct ng_prev *prev,
			     const struct ng_podref *pod, enum ng_keep keep, ng_names_fn resolve, void *ctx,
			     struct ng_pod_policy *out, struct ng_err *err);
void ng_pod_policy_free(struct ng_pod_policy *p);

#endif
