/* A recorded pod's policy, rebuilt from its record alone: ADD's stdin
 * through the one path of ADD, CHECK and verify (policy/pod_policy.h), and
 * the link facts ADD planned with (never the pod's present: a process with
 * NET_ADMIN in the pod chooses that), and the least it keeps (r->keep:
 * a live policy change never selects a running pod less). What the agent's learner, its drift
 * watch, a repair and `status` compare with and apply. Pure. */
#ifndef NG_RECPOLICY_H
#define NG_RECPOLICY_H

#include "base/err.h"
#include "policy/config.h"
#include "policy/pod_policy.h"
#include "spec/prevresult.h"
#include "state/record.h"

/* Everything the policy may point into (a "resolve" pod's elements name
 * the config's DNS names), alive together. */
struct ng_recpolicy {
	struct ng_config cfg;
	struct ng_prev prev;
	struct ng_pod_policy pp; /* pp.policy: the pod's policy */
};

/* `resolve` NULL: the pinned name sets are left empty (CHECK bounds them);
 * otherwise a "resolve" pod's names are asked again, as its ADD did. 0, or
 * -1 with err; `out` is to be freed with ng_recpolicy_free either way. */
int ng_recpolicy_build(const struct ng_record *r, ng_names_fn resolve, void *ctx, struct ng_recpolicy *out,
		       struct ng_err *err);
void ng_recpolicy_free(struct ng_recpolicy *rp);

/* The policy alone (no names asked, so nothing in it points into the
 * record's config): handed over into *pol. */
int ng_record_policy(const struct ng_record *r, struct ng_policy *pol, struct ng_err *err);

#endif
