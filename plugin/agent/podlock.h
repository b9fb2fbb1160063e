/* One commit lock per pod (by record key), shared by the agent's two
 * threads: the learner holds it while it plans, commits or sweeps a pod's
 * learned elements (its tracker changes only under it), the ops thread
 * while it rebuilds the pod's tables. A rebuild therefore reads the
 * tracker and commits the tables with those elements in them before any
 * later answer of the pod is committed, and no answer's commit can fall
 * between the rebuild's read and its commit (it would be lost with the
 * old tables): a learned name is never closed by a repair.
 *
 * Who waits on it: the ops thread, for one serve, sweep or keep-alive
 * commit of that pod. The learner never waits for a rebuild (it would hold
 * every pod's answers for as long as the rebuild's two transactions take:
 * 600 ms measured on the loaded machine): it tries the lock, and when the
 * ops thread holds it, parks the pod (its queue unwatched, its answers
 * waiting in the kernel's queue) until the ops thread lets the lock go and
 * wakes it (freed_fd). Only the pod being rebuilt waits. Letting a pod go
 * (DEL) and taking one on still wait: they are not per answer, nor is the
 * ops thread's copy of its rows for `status --names` (no kernel work, only
 * when the pod's learned state changed, at most once a second). */
#ifndef NG_AGENT_PODLOCK_H
#define NG_AGENT_PODLOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/taught.h"
#include "agent/tracker.h"
#include "base/err.h"
#include "base/vec.h"
#include "kernel/nl.h"
#include "policy/policy.h"

struct ng_podlock; /* one pod's: private to podlock.c */

/* Every pod's lock, kept while someone refers to it. */
struct ng_podlocks {
	pthread_mutex_t mu; /* the list itself, never held while a pod's lock is */
	NG_VEC(struct ng_podlock *) v;
	/* An eventfd, readable after the ops thread let a pod's lock go: the
	 * learner re-arms the pods it parked (ng_podlocks_woken). */
	int freed_fd;
};

/* 0, or -1 (no eventfd: errno). */
int ng_podlocks_init(struct ng_podlocks *r);
void ng_podlocks_free(struct ng_podlocks *r);
/* Wakes the learner (ng_podlock_unlock_ops does when it is needed). */
void ng_podlocks_wake(struct ng_podlocks *r);
/* The learner, freed_fd readable: clears it (then re-arms its parked
 * pods: whatever was parked before the wake sees its lock free or will be
 * woken again). */
void ng_podlocks_woken(struct ng_podlocks *r);

/* Pod `key`'s lock, made when nobody holds it yet; NULL out of memory.
 * Each get is given back with ng_podlock_put. */
struct ng_podlock *ng_podlock_get(struct ng_podlocks *r, const char *key);
void ng_podlock_put(struct ng_podlocks *r, struct ng_podlock *l);
void ng_podlock_lock(struct ng_podlock *l);
/* The learner's way in: true when it got the lock, false when the ops
 * thread holds it (park the pod). */
bool ng_podlock_trylock(struct ng_podlock *l);
/* The ops thread's way out: unlocks, and wakes the learner when it tried
 * the lock meanwhile. */
void ng_podlock_unlock_ops(struct ng_podlocks *r, struct ng_podlock *l);
void ng_podlock_unlock(struct ng_podlock *l);

/* Under the lock: the learner's trackers of the pod, its own tables' and
 * the node side's (NULL: no node side; both NULL: the learner lets the
 * pod go). */
void ng_podlock_attach(struct ng_podlock *l, struct ng_tracker *tr, struct ng_tracker *tr_node);

/* Under the lock: what each of its name entries taught (agent/taught.h;
 * NULL: the learner lets the pod go). */
void ng_podlock_attach_taught(struct ng_podlock *l, struct ng_taught *t);
/* Under the lock: `status --names`'s rows of the pod into out (taught,
 * taught_names: ng_taught_rows). 1 filled, 0 no learner serves the pod,
 * -1 out of memory. */
int ng_podlock_rows(struct ng_podlock *l, int64_t now_mono_ms, int64_t now_wall_ms, size_t max,
		    struct ng_view_pod *out);

/* Under the lock: what the learner holds for the pod, every live element
 * with the seconds it has left, into pol->learned (the pod's tables) and
 * pol->learned_node (the node side's), only those a name entry of `pol`
 * still covers (a re-plan may have fewer). Nothing when no learner serves
 * the pod. How many, or -1 out of memory. */
int ng_podlock_learned(struct ng_podlock *l, struct ng_policy *pol, int64_t now_ms);

/* What a caller of ng_podlock_apply asks under the lock (any may be NULL):
 *
 *   still    before anything is sent: false (the pod's DEL is under way)
 *            applies nothing;
 *   applied  after both sides were applied, still under the lock: a
 *            re-plan writes the pod's new record there, so that the
 *            learner (which commits under the same lock) never commits
 *            again with the policy the tables no longer hold. 0: done, and
 *            the learner's view of the pod is superseded until it takes
 *            the pod on again from the new record (ng_podlock_superseded);
 *            1: the record is gone or another's (the caller undoes what
 *            was applied); -1 with err. */
struct ng_podlock_hooks {
	bool (*still)(void *data);
	int (*applied)(void *data, struct ng_err *err);
	void *data;
};

/* Does the learner serve pod `key` (its trackers attached)? */
bool ng_podlocks_served(struct ng_podlocks *r, const char *key);

/* Under the lock: copies of the learner's trackers of the pod (tr_node
 * stays empty when it has no node side), only the elements a name entry
 * of `pol` covers (a re-plan may have dropped the others from the
 * tables). 0; 1 when no learner serves the pod; -1 out of memory. */
int ng_podlock_copy(struct ng_podlock *l, const struct ng_policy *pol, struct ng_tracker *tr,
		    struct ng_tracker *tr_node);

/* Applies pod `key`'s policy `pol` (built from its record; possibly new)
 * with every element the agent learned for the pod, both sides, one
 * transaction per namespace (kernel/podtables.h: a replace, never an
 * exclusive create first), under the pod's lock.
 * What was learned comes from the learner's trackers, or, when no learner
 * holds the pod (between two of its records, or it could not take the pod
 * on), from the learned sets the kernel holds now: a rebuild never closes
 * a learned name. The one path for a repair and for any re-plan of a
 * running pod. 0 applied, 1 skipped (still said no), 2 applied but the
 * `applied` hook found the record gone (undo), -1 with err; *st says what
 * it carried and what it cost. */
struct ng_podlock_stats {
	int learned;      /* elements carried into the new tables */
	int64_t wait_us;  /* for the pod's lock (the learner serving or sweeping the pod) */
	int64_t apply_us; /* both transactions */
};
int ng_podlock_apply(struct ng_podlocks *r, const char *key, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		     struct ng_policy *pol, const char *host_table, const struct ng_podlock_hooks *hooks,
		     struct ng_podlock_stats *st, struct ng_err *err);

/* Under the lock, the learner: has a re-plan superseded the policy its
 * pod was taken on with (the pod's record is new: take it on again before
 * committing anything)? Cleared by ng_podlock_attach. */
bool ng_podlock_superseded(const struct ng_podlock *l);

#endif
