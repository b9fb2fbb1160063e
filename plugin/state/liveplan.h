/* One running pod planned again from a new plugin entry (live policy:
 * agent/livepolicy.h applies it), pure: the pod's recorded ADD stdin with
 * the new entry in place of the old one and everything the runtime gave
 * for this pod kept (prevResult, runtimeConfig: its annotations), so the
 * new policy comes out of the one path of ADD (state/recpolicy.h) with
 * the link facts ADD recorded. Two things never widen on the way:
 *
 *   - a grant (netguard.boxxkite.io/egress) the new entry no longer
 *     admits (outside egress.envelope, under minPrefix, a wildcard where
 *     names are not learned) is dropped from the pod's copy of its
 *     annotation, never kept past the platform (policy/annotations.h);
 *   - a pod the new entry would select less (enforce to audit, or either
 *     to not selected) keeps the mode it runs with until its DEL, and the
 *     record says so (keep; policy/select.h): a running sandbox never
 *     loses protection to a live change.
 *
 * What the plan gives: the candidate record (new stdin, generation,
 * keep, mode, the tables of the new policy) and its policy. */
#ifndef NG_LIVEPLAN_H
#define NG_LIVEPLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "policy/config.h"
#include "state/record.h"
#include "state/recpolicy.h"

struct ng_liveplan {
	struct ng_record rec;   /* the pod's record as it will be (its nonce: the old one) */
	ng_str_vec dropped;     /* grants no longer admitted, "<entry> (<why>)" */
	bool kept;              /* the new entry selects the pod less: kept at rec.keep */
	struct ng_recpolicy rp; /* rec's policy (names not asked: the caller's apply does) */
};

/* Plans enforced record `old` under `entry` (ng_entry_of's shape, already
 * validated), as generation `gen`. 0, or -1 with err (the pod's own
 * policy does not build under the new entry: it keeps what it has).
 * `out` is freed with ng_liveplan_free either way. */
int ng_liveplan_build(const struct ng_record *old, const json_t *entry, uint64_t gen, struct ng_liveplan *out,
		      struct ng_err *err);
void ng_liveplan_free(struct ng_liveplan *lp);

#endif
