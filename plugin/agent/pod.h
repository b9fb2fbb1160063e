/* One pod in the learner (agent/learner.h keeps them by record key): the
 * policy rebuilt from its record, an NFQUEUE socket, a netfilter socket
 * and two raw sockets opened inside its namespace, the trackers of what
 * each side learned, what the node saw of its DNS (agent/observer.h), its
 * queries (agent/query.h), its DNS-over-TCP flows and its counters. Its
 * answers are decided in agent/answer.c; here it is opened, committed to,
 * swept and freed.
 *
 * Memory per pod: the struct (~24 KiB with its TCP flow slots, answers'
 * and queries', and the observer's tables), the outstanding queries
 * (agent/outq.h: 38 KiB from the first query), the compiled policy
 * (proportional to the config), two trackers (40 bytes per slot, at most
 * 2 * NG_TRACK_MAX slots each), TCP buffers from the agent-wide
 * NG_TCP_BUDGET (and the observer's), the observer's kept answers (at most
 * NG_SEEN_BYTES), four sockets (queue, netfilter, raw IPv4 and IPv6). */
#ifndef NG_AGENT_POD_H
#define NG_AGENT_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/flowq.h"
#include "agent/observer.h"
#include "agent/keepalive.h"
#include "agent/outq.h"
#include "agent/taught.h"
#include "agent/tcpflow.h"
#include "agent/tracker.h"
#include "kernel/learncommit.h"
#include "kernel/nfq.h"
#include "kernel/nl.h"
#include "kernel/rawsend.h"
#include "node/nodeview.h"
#include "policy/policy.h"
#include "spec/podref.h"
#include "state/record.h"

/* Counters, per pod and for the agent (the sum, plus what no pod owns):
 * /metrics exports them (NG_AC_* in node/nodeview.h). */
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
	/* answers the node side did not learn from: the node never saw them
	 * answer a query of the pod's across its host peer (agent/nodeseen.h) */
	uint64_t node_unseen;
	uint64_t node_unmatched; /* the observer's count (agent/nodeseen.h), copied at publish */
	uint64_t queries;        /* DNS queries seen (messages) */
	uint64_t refused;        /* of those, refused: never sent, answered by the agent */
	uint64_t would_refuse;   /* of those, an audited pod's it let through (would_deny) */
	uint64_t unmatched;      /* answers to no outstanding query: passed unlearned */
	uint64_t outq_full;      /* outstanding queries forgotten for room */
	uint64_t queue_budget;   /* turns its queue held more than NG_ANSWER_BUDGET */
	uint64_t ka_deferred;    /* due elements left to a later sweep (NG_KA_ELEMS) */
	uint64_t ka_cut;         /* keep-alive lookups cut at NG_KA_ENTRIES */
};

/* Refusals are logged once per name per pod per NG_REFUSAL_LOG_MS at most,
 * and at most NG_REFUSAL_LOG_BURST lines per pod in that time (a flood of
 * distinct names must not become a flood of log lines): the names logged
 * lately, by hash. */
#define NG_REFUSAL_LOG_MS    60000
#define NG_REFUSAL_LOG_NAMES 64
#define NG_REFUSAL_LOG_BURST 100
struct ng_refusal_log {
	uint64_t hash[NG_REFUSAL_LOG_NAMES];
	int64_t at_ms[NG_REFUSAL_LOG_NAMES];
	int64_t window_ms; /* start of the current burst window */
	unsigned lines;    /* lines logged in it */
	uint64_t quiet;    /* refusals not logged in it */
};

void ng_counters_add(struct ng_counters *to, const struct ng_counters *c);
/* Adds c into ac, by the names /metrics knows. */
void ng_counters_export(const struct ng_counters *c, uint64_t ac[NG_AC_COUNT]);

/* What every pod of the learner shares, passed to each call that needs
 * it: the netfilter socket in the node's namespace (the host-side tables),
 * the bytes all pods' DNS-over-TCP flows hold (NG_TCP_BUDGET) and the
 * node-side observer (what the host peers saw). */
struct ng_pod_shared {
	struct ng_nl *node_nl; /* NULL: none could be opened */
	size_t tcp_budget;
	struct ng_observer *obs; /* NULL, or not open: the node side learns nothing */
	struct ng_keepalive *ka; /* the keep-alive thread (agent/keepalive.h); NULL: none */
	struct ng_flowq *flowq;  /* the flow log's queue (agent/flow.h): refused queries; NULL: none */
};

struct ng_pod {
	char key[256];
	char nonce[NG_NONCE_LEN + 1];
	struct ng_podref pod;
	uint32_t ifindex; /* of pod.ifname, in the pod's namespace (recorded): answers come in there */
	uint32_t ka_next; /* where the next keep-alive job starts among the due elements */
	struct ng_policy policy;
	struct ng_set_spec sets[NG_S_COUNT];
	ng_learned_table_vec tables; /* every table holding its learned sets, both sides */
	struct ng_nfq q;
	struct ng_nl nl;
	/* What each side holds: the pod's tables learn from every answer its
	 * queue shows; the node-side table only from answers the node saw
	 * (nodeseen). Two trackers, so that neither side's view claims an element
	 * only the other holds. */
	struct ng_tracker tr, tr_node;
	struct ng_taught taught; /* which name taught each address (agent/taught.h) */
	uint64_t learned_gen;    /* moves with every change to the trackers or taught */
	struct ng_podseen nodeseen;
	struct ng_tcpflows tcp;
	/* The pod's queries (agent/query.h): outstanding ones, its
	 * DNS-over-TCP connections to resolvers, the raw sockets that answer
	 * refused ones, what was logged lately. */
	struct ng_outq oq;
	struct ng_tcpflows qtcp;
	struct ng_rawsend raw;
	struct ng_refusal_log rlog;
	/* The flow log (agent/flowq.h): every refused query, within the
	 * pod's log.ratePerSecond; what that holds back, told once a sweep. */
	struct ng_flowq *flowq;
	struct ng_tokens flow_tokens;
	uint64_t flow_skipped;
	uint64_t send_errors; /* refusal answers the raw sockets did not take */
	struct ng_counters c;
	struct ng_podlock *lock; /* its commit lock (agent/podlock.h): the learner's */
	uint64_t rec_ino;        /* its record file (a rewrite is a new inode) */
	bool node_side;          /* it has a table in the node's namespace */
	bool seen;               /* the last directory scan found its record */
	bool ka_waiting;         /* a keep-alive job of its is with the thread */
	bool parked;             /* its queue unwatched while the ops thread rebuilds it (agent/podlock.h) */
};

/* The pod of record `r` (a learning pod's: "pending" or "enforced"): its
 * identity and tables taken from r, its policy rebuilt, its sockets opened
 * in its namespace, what its learned sets still hold read back into the
 * tracker. 0 with *out, or -1 with err. */
int ng_pod_open(struct ng_record *r, struct ng_pod_shared *sh, struct ng_pod **out, struct ng_err *err);
/* Closes its sockets (they would keep its namespace, veth and address
 * alive) and frees it. */
void ng_pod_free(struct ng_pod *p, struct ng_pod_shared *sh);

/* Commits `pend` (planned by p->tr) to the pod's own tables, then
 * `pend_node` (planned by p->tr_node; NULL: none) to its node-side table
 * (kernel/learncommit.h): 0 when every namespace acknowledged; otherwise
 * logged, counted, and the trackers reverted (neither must claim an element
 * the kernel does not hold). */
int ng_pod_commit(struct ng_pod *p, struct ng_pod_shared *sh, const ng_pending_vec *pend,
		  const ng_pending_vec *pend_node);

/* Once a second, the namespace known to be the pod's: lifetimes, idle TCP
 * flows, and the elements about to expire handed to the keep-alive thread
 * (at most NG_KA_ELEMS, in turn), which looks for live connections in the
 * pod's conntrack table off this thread. */
void ng_pod_sweep(struct ng_pod *p, struct ng_pod_shared *sh, int64_t now_ms);
/* A keep-alive job of the pod's came back: the due elements a live flow
 * uses refreshed, in one commit. */
void ng_pod_kept_alive(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_ka_job *j);

/* A log line (agent/alog.h) about pod `p` (may be NULL). */
void ng_pod_log(const char *level, const char *event, const struct ng_pod *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
