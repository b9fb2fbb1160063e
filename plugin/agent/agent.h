/* The node agent (`boxxkite-netguard agent`): learns each pod's DNS-name
 * destinations from the pod's own answers (README "The node agent").
 *
 * One thread, one epoll loop. Per pod (a state record ADD wrote): the
 * policy rebuilt from the record by the policy layer, an NFQUEUE socket and
 * a netfilter socket opened inside the pod's namespace, the tracker of what
 * it learned, its DNS-over-TCP flows and its counters. An answer is parsed
 * (policy/dnsparse.c), matched (policy/learn.c), committed to every table
 * that enforces the pod (one transaction per namespace, each acknowledged)
 * and only then let through.
 *
 * Memory per pod: the struct (~3 KiB with its TCP flow slots), the
 * compiled policy (proportional to the config), the tracker (40 bytes per
 * learned element, at most NG_TRACK_MAX), TCP buffers from the agent-wide
 * NG_TCP_BUDGET, two sockets. */
#ifndef NG_AGENT_H
#define NG_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/alog.h"
#include "agent/tcpflow.h"
#include "base/clock.h"
#include "agent/tracker.h"
#include "base/vec.h"
#include "spec/podref.h"
#include "state/record.h"
#include "kernel/nfq.h"
#include "kernel/nl.h"
#include "nft/render_objs.h"
#include "policy/dnsparse.h"
#include "policy/learn.h"
#include "policy/policy.h"

/* Counters, per pod and for the agent (the sum, plus what no pod owns):
 * the operating issue exports them on /metrics. */
struct ng_counters {
	uint64_t answers;    /* DNS messages seen */
	uint64_t learned;    /* elements added or refreshed */
	uint64_t kept_alive; /* refreshes for live connections */
	uint64_t metadata;   /* metadata addresses refused */
	uint64_t unparsed;   /* answers that did not parse (passed, nothing learned) */
	uint64_t full;       /* elements refused by the tracker's bound */
	uint64_t commits;    /* transactions acknowledged */
	uint64_t commit_errors;
	uint64_t dropped; /* packets dropped: commit failed, TCP gap, bounds */
	uint64_t foreign; /* of those, not queued by the agent's own chain */
	uint64_t expired; /* elements whose lifetime ran out */
};

enum { NG_EV_NFQ = 1, NG_EV_INOTIFY, NG_EV_TIMER, NG_EV_SIGNAL, NG_EV_HTTP, NG_EV_OPS };

struct ng_ops; /* agent/ops.h: metrics, readiness, drift watch */

struct ng_pod {
	int ev; /* NG_EV_NFQ: first, so the epoll pointer says what it is */
	char key[256];
	char nonce[NG_NONCE_LEN + 1];
	struct ng_podref pod;
	uint32_t ifindex; /* of pod.ifname, in the pod's namespace (recorded): answers come in there */
	struct ng_policy policy;
	struct ng_set_spec sets[NG_S_COUNT];
	ng_record_table_vec tables;
	struct ng_nfq q;
	struct ng_nl nl;
	struct ng_tracker tr;
	struct ng_tcpflows tcp;
	struct ng_counters c;
	bool seen;        /* the last directory scan found its record */
	uint64_t rec_ino; /* its record file (a rewrite is a new inode) */
};

struct ng_agent {
	char state_dir[4096];
	int epfd, inotify_fd, timer_fd, signal_fd, http_fd, lock_fd;
	int ev_inotify, ev_timer, ev_signal, ev_http;
	struct ng_nl node_nl; /* host-side tables, in the agent's own namespace */
	bool node_nl_open;
	NG_VEC(struct ng_pod *) pods;
	struct ng_dns_msg *msg; /* scratch: one answer at a time */
	struct ng_learn_result lr;
	ng_pending_vec pending;
	uint8_t *rx;
	size_t tcp_budget;
	struct ng_counters c; /* totals, including released pods */
	bool serving;         /* the first scan is done: /readyz */
	struct ng_ops *ops;   /* the ops thread (agent/ops.h) */
	int ev_ops;
	bool stop;
};

/* Picks up (or re-reads, after a retried ADD) the pod of record file
 * pods/<name>; 0, or -1 when the record is unusable (logged). */
int ng_pod_load(struct ng_agent *a, const char *name);
/* Releases the pod: sockets closed (they would keep its namespace, veth
 * and address alive), ready file removed, memory freed. */
void ng_pod_release(struct ng_agent *a, struct ng_pod *p, const char *why);
struct ng_pod *ng_pod_find(struct ng_agent *a, const char *key);

/* Commits a->pending to every table of the pod (agent/commit.c): 0 when
 * every namespace acknowledged; otherwise the tracker is reverted. */
int ng_pod_commit(struct ng_agent *a, struct ng_pod *p);

/* Serves what the pod's queue holds. */
void ng_pod_serve(struct ng_agent *a, struct ng_pod *p);
/* Once a second: namespace still there, lifetimes, live connections,
 * idle TCP flows. */
void ng_pod_sweep(struct ng_agent *a, struct ng_pod *p, int64_t now_ms);
/* After a repair replaced the pod's table: every tracked element committed
 * again (the agent's view stays the truth for what it learned). */
void ng_pod_relearn(struct ng_agent *a, struct ng_pod *p);

/* A log line (agent/alog.h) about pod `p` (may be NULL). */
void ng_alog(const char *level, const char *event, const struct ng_pod *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* /readyz and /metrics on the --listen socket. */
int ng_http_listen(const char *addr, struct ng_err *err);
void ng_http_serve(struct ng_agent *a);

int ng_agent_main(int argc, char **argv);

#endif
