/* One pod the ops thread watches (agent/ops.h): read from its record in
 * stateDir/pods; for an enforced one, its compiled policy and a netfilter
 * socket and an nf_tables event socket inside its namespace; its part of
 * the node view (what its tables hold, its CHECKs, its drift). Everything
 * a pod's work needs of the thread comes in a struct ng_opod_env. */
#ifndef NG_OPSPOD_H
#define NG_OPSPOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/nftevents.h"
#include "kernel/nl.h"
#include "node/nodeview.h"
#include "policy/policy.h"
#include "state/record.h"

#define NG_OPOD_COLLECT_MS      5000 /* counters and learned sets re-read */
/* A learning pod's CHECK waits at most this long for the learner to take
 * the pod on (a repair before would carry none of what it learned). */
#define NG_OPOD_LEARNER_WAIT_MS 10000

struct ng_opod {
	struct ng_record d;
	uint64_t file_ino;
	bool seen;
	struct ng_policy pol;
	bool pol_ok;
	int ev_fd;
	struct ng_nl nl;
	bool nl_open;
	struct ng_view_pod vp;
	bool check_now;   /* a drift event asks for a CHECK: at once */
	bool check_due;   /* the periodic CHECK (or the first look): in turn, within the budget */
	bool collect_due; /* counters and learned sets: in turn, within the budget */
	bool fresh;       /* loaded by the scan under way: the node's events queued so far are its ADD's */
	bool batch_node;  /* batch_first was the node side's */
	bool live_other;  /* live policy: its record is another network's (below) */
	/* the changes of one read of the event socket, logged as one drift */
	unsigned batch_n;
	struct ng_nft_event batch_first;
	int64_t next_check_ms, next_collect_ms;
	int64_t loaded_ms;   /* when this thread picked the record up */
	char link_diff[200]; /* the link's difference from the record last reported ("" none) */
	/* Live policy (agent/livepolicy.h): the generation the pod is known to
	 * run (its record's, or the current one once its entry was found to be
	 * it), the current generation it was last looked at for, whether its
	 * record is another network's (not the followed entry's: live_other),
	 * and when a failed re-plan is tried again. */
	uint64_t live_gen, live_seen;
	int64_t live_retry_ms;
};

/* Is port id `portid` one of the learner's sockets in the namespace of the
 * pod of record `key` (node: in the node's)? Changes it makes are not
 * drift. */
typedef bool (*ng_opod_learner_fn)(void *data, const char *key, bool node, uint32_t portid);
/* A CHECK found the pod's tables not as recorded (`diff`), before any
 * repair: what Kubernetes sees of the pod goes unverified first
 * (agent/grants.h). */
typedef void (*ng_opod_drift_fn)(void *data, const struct ng_opod *p, const char *diff);

struct ng_opod_env {
	const char *state_dir;
	struct ng_podlocks *locks; /* shared with the learner (agent/podlock.h) */
	struct ng_nl *node_nl;     /* the thread's own socket in the node's namespace; NULL: none */
	bool repair;               /* --repair: drift re-applies the recorded policy */
	int check_ms;              /* between periodic CHECKs */
	ng_opod_learner_fn learner_owns;
	void *learner_data;
	ng_opod_drift_fn drift_seen; /* NULL: nobody is told */
	void *drift_data;
	/* More of the agent's own sockets in the node's namespace (live
	 * policy's workers: agent/livepods.h): their commits are not drift. */
	const uint32_t *self_node;
	size_t n_self_node;
	struct ng_view *local; /* the node-wide counters a pod's work adds to */
};

/* The pod of record file `path` (inode `ino`); NULL when unreadable
 * (logged). An enforced pod gets its sockets and a first CHECK at once. */
struct ng_opod *ng_opod_load(const char *path, uint64_t ino);
/* Its namespace is gone: its sockets close now (no socket keeps a deleted
 * pod alive), its view says why. */
void ng_opod_unwatch(struct ng_opod *p);
void ng_opod_free(struct ng_opod *p);
bool ng_opod_enforced(const struct ng_opod *p);

/* Reads what event socket `fd` holds: a pod's (the pod of `pods` whose
 * socket it is) or, node = true, the node's (every pod's host-side
 * table). A change to one of a pod's tables by anyone but the agent is
 * logged as one drift per pod and read, and marks the pod for a CHECK;
 * lost events mark every pod the socket watches. Returns the drifts. */
unsigned ng_opod_events(struct ng_opod *const *pods, size_t n, int fd, bool node,
			const struct ng_opod_env *env);
/* ng_opod_events in two halves: what the socket holds read into each
 * pod's batch (any thread that alone uses the pods' sockets at the time:
 * a re-plan drains its pod's events under the pod's commit lock, while the
 * learner that made them is still the one it publishes: agent/replan.h),
 * and every pod's batch logged as drift (the ops thread). */
void ng_opod_read_events(struct ng_opod *const *pods, size_t n, int fd, bool node,
			 const struct ng_opod_env *env);
unsigned ng_opod_report(struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env);

/* CHECKs both sides against the recorded policy (`why`: "drift",
 * "periodic", "first look") and the live link against the recorded link
 * facts (a new difference is logged as drift naming it, never adopted).
 * A CHECK that does not pass for a pod whose record is gone or rewritten
 * (its DEL, a retried ADD, under way) is nobody's drift. With
 * env->repair, tables that differ are repaired (agent/podlock.h: with
 * what the agent learned, in the same transaction) and checked again; a
 * CHECK that passed repairs nothing. True when a repair ran. */
bool ng_opod_check(struct ng_opod *p, const struct ng_opod_env *env, const char *why);
/* Is the pod still what its record file says: there, and the same file
 * (a DEL removes it before the tables; a retried ADD writes a new one)? */
bool ng_opod_recorded(const struct ng_opod *p, const struct ng_opod_env *env);
/* A DEL came while the agent committed the pod's tables (record `d`):
 * they go again, as DEL removes them (logged). */
void ng_opod_undo(struct ng_opod *p, const struct ng_record *d, const char *host_table);

/* Re-reads the pod's counters and learned set sizes into its view. */
void ng_opod_collect(struct ng_opod *p, const struct ng_opod_env *env);

/* A log line (agent/alog.h) about pod `p` (may be NULL). */
void ng_opod_log(const char *level, const char *event, const struct ng_opod *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
