/* The learner: the pods whose DNS answers the agent serves, one per
 * record in stateDir/pods that asks for learning (a pod being added, or
 * enforced, with egress.names "learn"), kept by record key. The loop
 * (agent/agent.c) hands it every record event, the once-a-second sweep
 * and each pod whose queue is readable; it tells the ops thread what it
 * serves (agent/ops.h). */
#ifndef NG_AGENT_LEARNER_H
#define NG_AGENT_LEARNER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/answer.h"
#include "agent/ops.h"
#include "agent/pod.h"
#include "agent/podlock.h"
#include "base/vec.h"
#include "kernel/nl.h"

struct ng_learner {
	const char *state_dir;
	int epfd; /* the loop's: each pod's queue is watched there, the pod its pointer */
	NG_VEC(struct ng_pod *) pods;
	struct ng_pod_shared sh;
	struct ng_answer_scratch scratch;
	struct ng_counters released; /* what released pods counted */
	struct ng_observer obs;      /* the node-side observer (sh.obs) */
	/* Each pod's commit lock, shared with the ops thread: every change to
	 * a pod's tracker and every commit of its learned elements happens
	 * under it (agent/podlock.h). */
	struct ng_podlocks locks;
	/* Keep-alive jobs back while their pod's lock was the ops thread's:
	 * taken again at the wake (agent/podlock.h). */
	struct ng_ka_job *ka_held;
};

/* node_nl: the loop's socket in the node's namespace, or NULL. -1 out of
 * memory. */
int ng_learner_init(struct ng_learner *l, const char *state_dir, int epfd, struct ng_nl *node_nl);
/* Releases every pod ("agent stopping") and frees the rest. */
void ng_learner_free(struct ng_learner *l);

/* Every record of stateDir/pods loaded or confirmed; pods whose record is
 * gone released. Catches what the directory's events could not tell
 * (an overflow, a restart). */
void ng_learner_scan(struct ng_learner *l);
/* Record file `name` was written: its pod picked up (or re-read, after a
 * retried ADD; released when it no longer asks for learning). 0, or -1
 * when the record is unusable (logged). */
int ng_learner_load(struct ng_learner *l, const char *name);
/* Record file `name` was removed (DEL): its pod released. */
void ng_learner_removed(struct ng_learner *l, const char *name);

/* The node-side observer's socket (-1: none), and: it is readable. */
int ng_learner_observer_fd(const struct ng_learner *l);
void ng_learner_observe(struct ng_learner *l);

/* Pod p's queue is readable: its answers served, or, while the ops
 * thread rebuilds the pod (its commit lock taken), the pod parked: its
 * queue unwatched until the wake, so that no other pod's answer waits for
 * that rebuild. True when p was let go instead (a re-plan superseded its
 * policy: agent/podlock.h; it is taken on again from its new record): no
 * other pointer to it may be used. */
bool ng_learner_serve(struct ng_learner *l, struct ng_pod *p);
/* The ops thread let a pod's lock go (l->locks.freed_fd readable): the
 * parked pods watched again, the held keep-alive jobs taken again. */
void ng_learner_unpark(struct ng_learner *l);
/* The keep-alive thread's fd is readable: its done jobs, each to its pod
 * (one released meanwhile is not there any more: the job is dropped). */
void ng_learner_kept_alive(struct ng_learner *l);
/* Once a second: pods whose namespace is gone (DEL may never come, or came
 * while the agent was down) released; the others swept. True when a pod
 * was taken on again (a re-plan superseded it): publish. */
bool ng_learner_sweep(struct ng_learner *l, int64_t now_ms);
/* Tells the ops thread its pods, their sockets' port ids and counters,
 * its totals (released pods included), whether it serves. */
void ng_learner_publish(const struct ng_learner *l, struct ng_ops *ops, bool serving);

#endif
