/* `status --names` on the ops thread: each learning pod's rows (what its
 * name entries taught, each side's expiry, kept alive: agent/taught.h)
 * copied into the pod's view under the pod's commit lock, when the
 * learner says what it learned changed (its learned_gen), at most once a
 * tick; and the document a `names` request gets, from the published
 * view (node/statusnames.h). No kernel work: the kernel's sets are what
 * the tests compare these rows with. */
#ifndef NG_OPSNAMES_H
#define NG_OPSNAMES_H

#include <stddef.h>

#include "agent/opspod.h"
#include "agent/opsview.h"
#include "agent/podlock.h"

/* Pods whose learner generation (agent: what the learner published, by
 * key) moved since their rows were read: read again. */
void ng_opsnames_collect(struct ng_opod *const *pods, size_t n, const struct ng_ops_agent_pod *agent,
			 size_t n_agent, struct ng_podlocks *locks);

#endif
