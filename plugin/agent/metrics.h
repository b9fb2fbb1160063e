/* /metrics: one valid Prometheus scrape of the whole node from the node
 * view. Every per-pod series carries namespace, pod and container (the
 * first 12 characters of the sandbox ID: two sandboxes of one pod, e.g.
 * the one being torn down and its successor, stay distinct series), never
 * a netns path. Families, all prefixed boxxkite_netguard_:
 *
 *   pod_decision{decision}                gauge 1 per pod the plugin decided
 *   denied_packets_total / denied_bytes_total{table,side,category}
 *   learned_addresses{family}             elements in the learned sets
 *   learned_name_addresses{name,ports}    per name entry
 *   pod_in_sync                           1/0: the last CHECK of both sides
 *   pod_last_check_timestamp_seconds
 *   drift_events_total, repairs_total{result}
 *   pod_<agent counter>                   what the agent learned for the pod
 *   cni_invocations_total{verb,decision}, cni_invocation_duration_seconds
 *   agent_up, agent_start_time_seconds, agent_serving, agent_ready{check},
 *   agent_pods{decision}, agent_<counter> (node totals), agent_* activity
 * Pure. */
#ifndef NG_METRICS_H
#define NG_METRICS_H

#include <stdio.h>

#include "node/nodeview.h"

#define NG_METRIC_PREFIX "boxxkite_netguard_"

void ng_metrics_render(const struct ng_view *v, FILE *out);
/* Whether the per-pod series are served (the view's --pod-metrics bound). */
bool ng_metrics_per_pod(const struct ng_view *v);

#endif
