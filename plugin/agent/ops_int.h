/* The ops thread's own state (agent/ops.h): shared by ops.c (the thread,
 * the published view) and opspod.c (one pod: load, events, CHECK, repair,
 * collection). Nothing here is touched by the main loop but under `mu`. */
#ifndef NG_OPS_INT_H
#define NG_OPS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/nftevents.h"
#include "base/clock.h"
#include "agent/invfold.h"
#include "agent/ops.h"
#include "agent/readyz.h"
#include "state/record.h"
#include "kernel/nl.h"
#include "node/nodeview.h"
#include "policy/policy.h"

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
	bool check_now;
	/* the changes of one read of the event socket, logged as one drift */
	unsigned batch_n;
	struct ng_nft_event batch_first;
	int64_t next_check_ms, next_collect_ms;
};

struct ng_ops {
	struct ng_ops_config cfg;
	char state_dir[4096];
	pthread_t thread;
	int stop_fd, relearn_fd, inotify_fd, node_ev_fd;
	struct ng_nl node_nl;
	bool node_nl_open;
	NG_VEC(struct ng_opod *) pods;
	struct ng_invfold fold;
	struct ng_readyz readyz;
	struct ng_view local; /* counters that outlive pods, readiness, totals */
	bool dirty;
	int64_t next_tick_ms, last_publish_ms;
	pid_t tid;

	pthread_mutex_t mu;    /* guards what follows */
	struct ng_view shared; /* the last complete view: /metrics, /readyz */
	bool agent_serving;
	uint32_t agent_node_portid;
	NG_VEC(struct ng_ops_agent_pod) agent_pods;
	uint64_t agent_totals[NG_AC_COUNT];
	bool agent_published;
	NG_VEC(char *) relearn;
};

/* JSON line on stderr, with the pod's namespace/name when given. */
/* Builds the view outside the lock and swaps it in; rewrites status.json
 * (opsview.c). */
void ng_ops_publish_view(struct ng_ops *o);
void ng_ops_log(const char *level, const char *event, const struct ng_opod *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* opspod.c */
struct ng_opod *ng_opod_load(struct ng_ops *o, const char *path, uint64_t ino);
void ng_opod_free(struct ng_opod *p);
/* Events from the pod's namespace (or the node's: node = true). */
void ng_opod_events(struct ng_ops *o, int fd, bool node);
void ng_opod_check(struct ng_ops *o, struct ng_opod *p, const char *why);
void ng_opod_collect(struct ng_ops *o, struct ng_opod *p);
/* Is port id `portid` one of the agent's sockets in pod p's namespace
 * (node: in the node's)? */
bool ng_ops_is_self(struct ng_ops *o, const struct ng_opod *p, bool node, uint32_t portid);

#endif
