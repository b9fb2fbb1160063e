/* Live policy, the pods' side (agent/livepolicy.h follows the entry): every
 * enforced pod of the entry's network brought onto the current generation
 * through the one re-plan path (agent/replan.h).
 *
 * A re-plan costs little CPU but waits on the kernel (a table replaced is
 * an RCU grace period, tens of ms on a busy node, on each side), so the
 * pods are spread over NG_LIVE_WORKERS threads while the ops thread waits
 * for them (nothing else of the ops thread runs meanwhile: a pod's sockets
 * are only ever used by one thread at a time). Each worker commits the
 * node side through a netlink socket of its own, opened once for the
 * agent's life, whose port id the drift watch knows as the agent's
 * (struct ng_opod_env's self_node). Every pod is its own unit: its commit
 * lock, its record, its transactions. */
#ifndef NG_LIVEPODS_H
#define NG_LIVEPODS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/opspod.h"
#include "kernel/nl.h"
#include "node/nodeview.h"
#include "state/policygen.h"

#define NG_LIVE_WORKERS 8

struct ng_livepods_stats {
	uint64_t replans, replan_errors; /* pods re-planned, re-plans that failed */
	uint64_t dropped;                /* grants the new envelope no longer covered */
	uint64_t cut;                    /* live flows the new policy no longer admits */
};

struct ng_livepods {
	struct ng_nl node[NG_LIVE_WORKERS]; /* each worker's socket in the node's namespace */
	uint32_t portids[NG_LIVE_WORKERS];
	size_t n; /* opened (0: the re-plans run on the calling thread, its env's socket) */
	struct ng_livepods_stats st;
};

/* Opens the workers' sockets (in the calling thread's namespace: the
 * node's); fewer, or none, when they cannot be opened. */
void ng_livepods_init(struct ng_livepods *lp);
void ng_livepods_close(struct ng_livepods *lp);

/* Each enforced pod (its namespace open, its policy usable) whose record is
 * not of generation `cur`: one of another network (its stdin's "name" is
 * not the entry's) is left as it is; one whose entry already is `cur`'s is
 * counted current; the others are planned from `cur` (state/liveplan.h)
 * and re-planned, spread over the workers. Each pod's view says its
 * generation; `vp` gets the pods of the network, those behind, those whose
 * re-plan failed (tried again every NG_LIVE_RETRY_MS). */
void ng_livepods_run(struct ng_livepods *lp, const struct ng_policygen *cur, struct ng_opod *const *pods,
		     size_t n, const struct ng_opod_env *env, struct ng_view_policy *vp);

#endif
