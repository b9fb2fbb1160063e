/* The node as the operator sees it: every pod the plugin decided about
 * (from stateDir/decisions), what the kernel holds for each enforced one
 * (deny counters of every table, learned set sizes, the last CHECK), the
 * drift seen, the plugin's invocation totals, and the agent's own
 * counters. The ops thread (agent/ops.h) fills it; /metrics, /readyz and
 * the status file are rendered from it. Plain data. */
#ifndef NG_NODEVIEW_H
#define NG_NODEVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/histogram.h"
#include "base/vec.h"
#include "policy/policy.h"
#include "state/invstats.h"

/* The agent's DNS-learning counters (agent/agent.h's struct ng_counters),
 * by name, so the renderer needs no agent internals. */
enum {
	NG_AC_ANSWERS,
	NG_AC_LEARNED,
	NG_AC_KEPT_ALIVE,
	NG_AC_METADATA,
	NG_AC_UNPARSED,
	NG_AC_FULL,
	NG_AC_COMMITS,
	NG_AC_COMMIT_ERRORS,
	NG_AC_DROPPED,
	NG_AC_EXPIRED,
	NG_AC_NODE_UNSEEN,
	NG_AC_NODE_UNMATCHED,
	NG_AC_OBSERVER_LOST,
	NG_AC_QUERIES,
	NG_AC_REFUSED,
	NG_AC_WOULD_REFUSE,
	NG_AC_UNMATCHED,
	NG_AC_OUTQ_FULL,
	NG_AC_QUEUE_BUDGET,
	NG_AC_KA_DEFERRED,
	NG_AC_KA_CUT,
	NG_AC_COUNT
};
struct ng_agent_counter_def {
	const char *metric, *help;
};
extern const struct ng_agent_counter_def ng_agent_counter_defs[NG_AC_COUNT];

struct ng_view_counter {
	char table[256]; /* NFT_NAME_MAXLEN */
	bool in_node, netdev;
	char category[32]; /* counter name without "_denied" / "_would_deny" */
	bool would_deny;   /* an audited table's count of what it let through */
	uint64_t packets, bytes;
};

struct ng_view_name {
	char name[256];       /* the name entry, "*.suffix" for wildcards */
	char proto_ports[24]; /* "tcp/443", "udp/53-54" */
	unsigned addresses;   /* learned elements of the entry's proto and ports */
};

/* One element a learning pod holds for a name entry (`status --names`):
 * each side's expiry and whether a live connection renewed it. */
#define NG_VIEW_NAME_NONE   0xffff /* no entry known: learned before the agent restarted */
#define NG_VIEW_LEARNED_MAX 1024   /* rows per pod in the view; the rest counted */
struct ng_view_learned {
	struct ng_ip ip;
	uint16_t name; /* index into taught_names, or NG_VIEW_NAME_NONE */
	uint8_t proto;
	bool kept_alive; /* its lease was last renewed by a live connection */
	uint16_t p_lo, p_hi;
	int64_t pod_expires_ms, node_expires_ms; /* unix ms; 0: that side does not hold it */
};

struct ng_view_pod {
	char key[256], ns[256], name[256], container[129];
	char decision[24], reason[256];
	int code;
	int64_t at_ms;
	bool learn, audit, refused_file;
	/* The kernel, enforced pods (the last look) */
	bool read_ok;
	char read_error[160];
	NG_VEC(struct ng_view_counter) counters;
	NG_VEC(struct ng_view_name) names;
	uint64_t learned[2]; /* elements in the learned sets, v4 and v6 */
	bool pod_present, node_present, has_node_side;
	/* CHECK and drift */
	int64_t last_check_ms;
	bool checked, in_sync;
	char diff[256];
	uint64_t drift_events, repairs, repair_errors;
	/* The agent's counters for this pod (only pods whose names it learns) */
	bool has_agent;
	/* What its name entries taught, as the learner holds it (agent/taught.h):
	 * the entries, then each element under its entry */
	bool has_taught;
	bool guard; /* the pod side's elements are also in its packet-socket guard */
	uint64_t ac[NG_AC_COUNT];
	uint64_t taught_gen;  /* the learner's generation it was read at */
	uint64_t taught_more; /* rows past NG_VIEW_LEARNED_MAX */
	NG_VEC(struct ng_view_name) taught_names;
	NG_VEC(struct ng_view_learned) taught;
	/* Live policy (agent/livepolicy.h): the policy generation the pod runs
	 * (0 unknown), whether it is the node's current one, and whether the
	 * pod is kept at a mode the current entry would not give it. */
	uint64_t generation;
	bool behind, kept;
};

struct ng_inv_row {
	char verb[8], decision[24];
	uint64_t n;
};

#define NG_INV_VERBS 6
extern const char *const ng_inv_verbs[NG_INV_VERBS];

struct ng_invtotals {
	struct ng_inv_row row[64];
	unsigned nrows;
	uint64_t other; /* rows past the table's size, counted under "other" */
	struct ng_hist hist[NG_INV_VERBS];
	uint64_t malformed;
};

/* Folds one invocation line into the totals. Pure. */
void ng_invtotals_add(struct ng_invtotals *t, const struct ng_inv *inv);

struct ng_ready {
	bool binary, conflist, serving;
	char binary_msg[768], conflist_msg[768], serving_msg[128];
	/* live policy: the active entry is followed and every pod runs it (or
	 * is being re-planned); has_policy false: no such line (no agent) */
	bool has_policy, policy;
	char policy_msg[768];
};

/* Live policy (agent/livepolicy.h): the node's policy generation and how
 * its pods follow it. */
struct ng_view_policy {
	uint64_t gen; /* current; 0: none yet */
	bool valid;   /* the active entry is ours and valid */
	char file[512];
	uint64_t pods, behind,
		failed; /* enforced pods on this network, not on gen, of those whose re-plan failed */
	uint64_t changes, refused, replans, replan_errors, dropped, cut; /* counters */
	double replan_seconds; /* the last generation: from seen to its last pod re-planned */
};

struct ng_view {
	NG_VEC(struct ng_view_pod) pods;
	struct ng_invtotals inv;
	int64_t start_ms, now_ms; /* unix ms */
	char agent_version[32];   /* the publishing agent's NG_VERSION */
	bool serving;
	bool repair;
	int pod_metrics_limit; /* agent --pod-metrics: -1 always, 0 never, else at most N pods */
	uint64_t scans, check_runs, drift_events, repairs, repair_errors, kernel_errors;
	uint64_t events_lost;     /* overruns of an nf_tables event socket (the kernel dropped events) */
	uint64_t ac[NG_AC_COUNT]; /* agent totals, released pods included */
	bool has_agent;
	struct ng_ready ready;
	struct ng_view_policy policy;
};

void ng_view_pod_free(struct ng_view_pod *p);
void ng_view_free(struct ng_view *v);
struct ng_view_pod *ng_view_find(struct ng_view *v, const char *key);
/* A name entry as the view shows it: "*.suffix" for a wildcard, "tcp/443". */
void ng_view_name_set(struct ng_view_name *vn, const struct ng_name_entry *e);

#endif
