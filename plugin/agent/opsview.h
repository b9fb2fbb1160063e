/* The ops thread's published view (agent/ops.h): a copy of every watched
 * pod's part of the node view, the node-wide counters, and what the
 * learner last published, merged into one struct ng_view for /metrics,
 * /readyz and stateDir/status.json (`boxxkite-netguard status`). */
#ifndef NG_OPSVIEW_H
#define NG_OPSVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/opspod.h"
#include "node/nodeview.h"

/* What the learner publishes about a pod it learns for. */
struct ng_ops_agent_pod {
	char key[256];
	uint32_t portid;      /* its netfilter socket in the pod's namespace */
	uint64_t learned_gen; /* moves when what it learned changes (agent/pod.h) */
	uint64_t ac[NG_AC_COUNT];
};

/* What the learner published last (none yet: published false). */
struct ng_opsview_learner {
	bool published, serving;
	const struct ng_ops_agent_pod *pods;
	size_t n;
	uint64_t totals[NG_AC_COUNT]; /* released pods included */
};

/* A complete view into `out` (its own copies of everything: the caller's
 * pods may change right after): `local`'s counters, readiness and
 * invocation totals, each pod's view with the learner's counters for the
 * pods it serves. Never fails: a pod that cannot be copied (out of memory)
 * ends the list. */
void ng_opsview_build(const struct ng_view *local, struct ng_opod *const *pods, size_t n,
		      const struct ng_opsview_learner *l, int64_t now_ms, struct ng_view *out);

/* Rewrites stateDir/status.json from `v` (a temp file renamed over it). */
void ng_opsview_write_status(const char *state_dir, const struct ng_view *v);

#endif
