/* The agent's operating side, in a thread of its own so that nothing it
 * does (dumping every pod's tables, a CHECK, a repair) ever delays a DNS
 * answer the main loop holds:
 *
 *   - every pod of the node from stateDir/pods (agent/opspod.h), enforced
 *     ones with a netfilter socket and an nf_tables event socket opened
 *     inside their namespace (closed when the record goes or the namespace
 *     does: no socket keeps a deleted pod alive);
 *   - the drift watch: a change to one of a pod's tables by any socket but
 *     the agent's own (kernel/nftevents.h) is a drift event at once, followed
 *     by a CHECK; a periodic CHECK of every pod catches what no event told
 *     (a missed event, an overrun); with --repair the recorded policy is
 *     re-applied with what the learner learned for the pod, in one
 *     transaction per namespace, under the pod's commit lock
 *     (agent/podlock.h);
 *   - the plugin's invocation totals (agent/invfold.h), /readyz's checks,
 *     the node view behind /metrics, and stateDir/status.json for
 *     `boxxkite-netguard status` (agent/opsview.h).
 * The main loop calls only the functions below: publish its counters; the
 * HTTP thread answers from the last view. */
#ifndef NG_OPS_H
#define NG_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include <stdio.h>

#include "agent/opsview.h"
#include "base/err.h"
#include "node/nodeview.h"

/* --listen's default: loopback, as the agent runs with hostNetwork (the
 * node's own scraper or a kubelet probe reach it; nothing else does). */
#define NG_AGENT_LISTEN_DEFAULT "127.0.0.1:9617"
#define NG_OPS_CHECK_MS         30000 /* periodic CHECK of every pod (events are at once) */

struct ng_ops_config {
	const char *state_dir, *bin_dir, *conf_dir;
	struct ng_podlocks *locks; /* the learner's (agent/podlock.h) */
	bool repair;
	int check_ms;
	struct ng_kube *kube; /* the API's view of the node's pods (agent/kube.h); NULL: off */
	struct ng_flow *flow; /* the flow thread (agent/flow.h): told the enforced pods; NULL: none */
	/* Per-pod series while at most this many pods are recorded (-1: always,
	 * 0: never); node totals always (--pod-metrics). */
	int pod_metrics_limit;
};
#define NG_POD_METRICS_DEFAULT 500

struct ng_ops;
struct ng_flow_filter;

int ng_ops_start(const struct ng_ops_config *c, struct ng_ops **out, struct ng_err *err);
void ng_ops_stop(struct ng_ops *o);

/* Main loop: its pods, their sockets' port ids and counters, its totals
 * (released pods included), whether it serves, its node-side socket. */
void ng_ops_publish(struct ng_ops *o, bool serving, uint32_t node_portid, const struct ng_ops_agent_pod *pods,
		    size_t n, const uint64_t totals[NG_AC_COUNT]);

/* HTTP answers from the last view (no kernel work on the caller's time),
 * for the HTTP thread (agent/http.h): the view has a lock of its own, so
 * a render never holds up the main loop's publish. ng_ops_metrics returns
 * the generation of the view it rendered; ng_ops_view_gen the current one
 * (a rendered body stays good while it is the same). */
uint64_t ng_ops_metrics(struct ng_ops *o, FILE *out);
uint64_t ng_ops_view_gen(struct ng_ops *o);
bool ng_ops_readyz(struct ng_ops *o, FILE *out);
/* The flow thread's `names` answer (agent/flow.h: ng_flow_names_fn; data
 * is the struct ng_ops): from the last view, under its lock. */
json_t *ng_ops_names(void *data, const struct ng_flow_filter *f);

#endif
