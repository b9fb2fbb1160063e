#include "agent/metrics.h"

#include <string.h>

#include "agent/promtext.h"

#define P NG_METRIC_PREFIX

struct podlabels {
	char container[13];
	struct ng_prom_labels l;
};

/* pod_namespace, pod_name, sandbox_id, then more pairs at l.kv[6..].
 * Never namespace/pod/container: a Kubernetes scrape attaches those as
 * target labels (the agent's own pod) and Prometheus would rename ours
 * exported_*; and the value is the sandbox's ID, not a container's name.
 * The names are the decision log's (pod_namespace, pod_name). */
static void pod_labels(const struct ng_view_pod *p, struct podlabels *pl)
{
	memset(pl, 0, sizeof(*pl));
	snprintf(pl->container, sizeof(pl->container), "%.12s", p->container);
	pl->l.kv[0] = "pod_namespace";
	pl->l.kv[1] = p->ns;
	pl->l.kv[2] = "pod_name";
	pl->l.kv[3] = p->name;
	pl->l.kv[4] = "sandbox_id";
	pl->l.kv[5] = pl->container;
}

static bool enforced(const struct ng_view_pod *p)
{
	return !strcmp(p->decision, "enforced");
}

static void decisions(const struct ng_view *v, FILE *out)
{
	struct podlabels pl;

	ng_prom_family(
		out, P "pod_decision", "gauge",
		"1 for each pod the plugin decided about on this node, by decision (enforced, skipped, "
		"refused, error); an enforced pod's mode is enforce or audit (enforce.auditNamespaces: "
		"refusals logged and let through).");
	for (size_t i = 0; i < v->pods.n; i++) {
		pod_labels(&v->pods.v[i], &pl);
		pl.l.kv[6] = "decision";
		pl.l.kv[7] = v->pods.v[i].decision;
		if (enforced(&v->pods.v[i])) {
			pl.l.kv[8] = "mode";
			pl.l.kv[9] = v->pods.v[i].audit ? "audit" : "enforce";
		}
		ng_prom_u64(out, P "pod_decision", &pl.l, 1);
	}
}

/* would: an audited pod's counts of what its tables let through. */
static void denied(const struct ng_view *v, FILE *out, bool bytes, bool would)
{
	static const char *const names[2][2] = {
		{P "denied_packets_total", P "denied_bytes_total"},
		{P "would_deny_packets_total", P "would_deny_bytes_total"},
	};
	static const char *const helps[2][2] = {
		{"Packets refused by a table that enforces the pod, by table, side and category.",
		 "Bytes refused by a table that enforces the pod, by table, side and category."},
		{"Packets an audited pod's table would refuse and let through (enforce.auditNamespaces).",
		 "Bytes an audited pod's table would refuse and let through (enforce.auditNamespaces)."},
	};
	const char *name = names[would][bytes];
	struct podlabels pl;

	ng_prom_family(out, name, "counter", helps[would][bytes]);
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];

		pod_labels(p, &pl);
		for (size_t k = 0; k < p->counters.n; k++) {
			const struct ng_view_counter *c = &p->counters.v[k];

			if (c->would_deny != would)
				continue;
			pl.l.kv[6] = "table";
			pl.l.kv[7] = c->netdev ? "netdev" : "inet";
			pl.l.kv[8] = "side";
			pl.l.kv[9] = c->in_node ? "node" : "pod";
			pl.l.kv[10] = "category";
			pl.l.kv[11] = c->category;
			ng_prom_u64(out, name, &pl.l, bytes ? c->bytes : c->packets);
		}
	}
}

static void learned(const struct ng_view *v, FILE *out)
{
	struct podlabels pl;

	ng_prom_family(out, P "learned_addresses", "gauge",
		       "Addresses (set elements) in the pod's learned name sets, by family.");
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];

		if (!enforced(p) || !p->learn || !p->read_ok)
			continue;
		pod_labels(p, &pl);
		pl.l.kv[6] = "family";
		for (int f = 0; f < 2; f++) {
			pl.l.kv[7] = f ? "ipv6" : "ipv4";
			ng_prom_u64(out, P "learned_addresses", &pl.l, p->learned[f]);
		}
	}
	ng_prom_family(
		out, P "learned_name_addresses", "gauge",
		"Learned addresses for each of the pod's name entries (elements of the entry's protocol "
		"and ports; entries sharing them count the same elements).");
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];

		if (!p->read_ok)
			continue;
		pod_labels(p, &pl);
		for (size_t k = 0; k < p->names.n; k++) {
			pl.l.kv[6] = "name";
			pl.l.kv[7] = p->names.v[k].name;
			pl.l.kv[8] = "ports";
			pl.l.kv[9] = p->names.v[k].proto_ports;
			ng_prom_u64(out, P "learned_name_addresses", &pl.l, p->names.v[k].addresses);
		}
	}
}

static void checks(const struct ng_view *v, FILE *out)
{
	struct podlabels pl;

	ng_prom_family(
		out, P "pod_in_sync", "gauge",
		"1 when the last CHECK found every table of the pod as its recorded policy renders it.");
	for (size_t i = 0; i < v->pods.n; i++)
		if (v->pods.v[i].checked) {
			pod_labels(&v->pods.v[i], &pl);
			ng_prom_u64(out, P "pod_in_sync", &pl.l, v->pods.v[i].in_sync);
		}
	ng_prom_family(out, P "pod_last_check_timestamp_seconds", "gauge",
		       "Unix time of the pod's last CHECK by the agent.");
	for (size_t i = 0; i < v->pods.n; i++)
		if (v->pods.v[i].checked) {
			pod_labels(&v->pods.v[i], &pl);
			ng_prom_double(out, P "pod_last_check_timestamp_seconds", &pl.l,
				       (double)v->pods.v[i].last_check_ms / 1000.0);
		}
	ng_prom_family(out, P "drift_events_total", "counter",
		       "Changes to the pod's tables by anyone but the plugin and the agent, and CHECKs that "
		       "found a difference.");
	for (size_t i = 0; i < v->pods.n; i++)
		if (enforced(&v->pods.v[i])) {
			pod_labels(&v->pods.v[i], &pl);
			ng_prom_u64(out, P "drift_events_total", &pl.l, v->pods.v[i].drift_events);
		}
	ng_prom_family(out, P "repairs_total", "counter",
		       "Re-applications of the pod's recorded policy after drift (repair: true), by result.");
	for (size_t i = 0; i < v->pods.n; i++)
		if (enforced(&v->pods.v[i])) {
			pod_labels(&v->pods.v[i], &pl);
			pl.l.kv[6] = "result";
			pl.l.kv[7] = "ok";
			ng_prom_u64(out, P "repairs_total", &pl.l, v->pods.v[i].repairs);
			pl.l.kv[7] = "failed";
			ng_prom_u64(out, P "repairs_total", &pl.l, v->pods.v[i].repair_errors);
		}
}

static void agent_counters(const struct ng_view *v, FILE *out)
{
	char name[128], help[256];
	struct podlabels pl;

	for (int c = 0; c < NG_AC_COUNT; c++) {
		snprintf(name, sizeof(name), P "pod_%s", ng_agent_counter_defs[c].metric);
		snprintf(help, sizeof(help), "Per pod: %s", ng_agent_counter_defs[c].help);
		ng_prom_family(out, name, "counter", help);
		for (size_t i = 0; i < v->pods.n; i++)
			if (v->pods.v[i].has_agent) {
				pod_labels(&v->pods.v[i], &pl);
				ng_prom_u64(out, name, &pl.l, v->pods.v[i].ac[c]);
			}
	}
	for (int c = 0; c < NG_AC_COUNT; c++) {
		snprintf(name, sizeof(name), P "agent_%s", ng_agent_counter_defs[c].metric);
		snprintf(help, sizeof(help), "Node total (released pods included): %s",
			 ng_agent_counter_defs[c].help);
		ng_prom_family(out, name, "counter", help);
		ng_prom_u64(out, name, NULL, v->ac[c]);
	}
}

static void invocations(const struct ng_view *v, FILE *out)
{
	struct ng_prom_labels l = {{0}};

	ng_prom_family(out, P "cni_invocations_total", "counter",
		       "Plugin invocations on this node since the agent started, by verb and decision.");
	for (unsigned i = 0; i < v->inv.nrows; i++) {
		l = (struct ng_prom_labels){{"verb", v->inv.row[i].verb, "decision", v->inv.row[i].decision}};
		ng_prom_u64(out, P "cni_invocations_total", &l, v->inv.row[i].n);
	}
	if (v->inv.other) {
		l = (struct ng_prom_labels){{"verb", "other", "decision", "other"}};
		ng_prom_u64(out, P "cni_invocations_total", &l, v->inv.other);
	}
	ng_prom_family(out, P "cni_invocation_duration_seconds", "histogram",
		       "Wall time of plugin invocations, by verb.");
	for (int k = 0; k < NG_INV_VERBS; k++) {
		if (!v->inv.hist[k].count && k > 2)
			continue; /* ADD, DEL and CHECK always; the rest once seen */
		l = (struct ng_prom_labels){{"verb", ng_inv_verbs[k]}};
		ng_prom_hist(out, P "cni_invocation_duration_seconds", &l, &v->inv.hist[k]);
	}
	ng_prom_family(out, P "cni_invocation_lines_malformed_total", "counter",
		       "Lines of stateDir/invocations.log that were not one invocation.");
	ng_prom_u64(out, P "cni_invocation_lines_malformed_total", NULL, v->inv.malformed);
}

static void health(const struct ng_view *v, FILE *out)
{
	static const char *const kinds[] = {"enforced", "skipped", "refused", "error"};
	struct ng_prom_labels l;
	uint64_t n[4] = {0};

	ng_prom_family(out, P "agent_up", "gauge", "1: the agent answers.");
	ng_prom_u64(out, P "agent_up", NULL, 1);
	ng_prom_family(out, P "agent_start_time_seconds", "gauge", "Unix time the agent started.");
	ng_prom_double(out, P "agent_start_time_seconds", NULL, (double)v->start_ms / 1000.0);
	ng_prom_family(out, P "agent_serving", "gauge",
		       "1 once the agent has picked up every recorded pod and serves their DNS answers.");
	ng_prom_u64(out, P "agent_serving", NULL, v->serving);
	ng_prom_family(out, P "agent_ready", "gauge", "The /readyz checks: 1 passed, 0 failed.");
	l = (struct ng_prom_labels){{"check", "binary"}};
	ng_prom_u64(out, P "agent_ready", &l, v->ready.binary);
	l = (struct ng_prom_labels){{"check", "conflist"}};
	ng_prom_u64(out, P "agent_ready", &l, v->ready.conflist);
	l = (struct ng_prom_labels){{"check", "agent"}};
	ng_prom_u64(out, P "agent_ready", &l, v->ready.serving);
	if (v->ready.has_policy) {
		l = (struct ng_prom_labels){{"check", "policy"}};
		ng_prom_u64(out, P "agent_ready", &l, v->ready.policy);
	}
	ng_prom_family(out, P "agent_repair_enabled", "gauge", "1 when drift is repaired (--repair).");
	ng_prom_u64(out, P "agent_repair_enabled", NULL, v->repair);
	for (size_t i = 0; i < v->pods.n; i++)
		for (int k = 0; k < 4; k++)
			if (!strcmp(v->pods.v[i].decision, kinds[k]))
				n[k]++;
	ng_prom_family(out, P "agent_pods", "gauge",
		       "Pods with a decision record on this node, by decision.");
	for (int k = 0; k < 4; k++) {
		l = (struct ng_prom_labels){{"decision", kinds[k]}};
		ng_prom_u64(out, P "agent_pods", &l, n[k]);
	}
	ng_prom_family(out, P "agent_checks_total", "counter", "CHECKs of a pod's tables run by the agent.");
	ng_prom_u64(out, P "agent_checks_total", NULL, v->check_runs);
	ng_prom_family(out, P "agent_drift_events_total", "counter",
		       "Drift events on this node (released pods included).");
	ng_prom_u64(out, P "agent_drift_events_total", NULL, v->drift_events);
	ng_prom_family(out, P "agent_repairs_total", "counter", "Repairs on this node, by result.");
	l = (struct ng_prom_labels){{"result", "ok"}};
	ng_prom_u64(out, P "agent_repairs_total", &l, v->repairs);
	l = (struct ng_prom_labels){{"result", "failed"}};
	ng_prom_u64(out, P "agent_repairs_total", &l, v->repair_errors);
	ng_prom_family(out, P "agent_kernel_read_errors_total", "counter",
		       "Failed reads of a pod's tables (namespace gone, netlink error).");
	ng_prom_u64(out, P "agent_kernel_read_errors_total", NULL, v->kernel_errors);
	ng_prom_family(out, P "agent_drift_events_lost_total", "counter",
		       "Overruns of the drift watch's event sockets (events dropped by the kernel; "
		       "the pods they watch are CHECKed).");
	ng_prom_u64(out, P "agent_drift_events_lost_total", NULL, v->events_lost);
}

/* Live policy (agent/livepolicy.h): the node's generation, the pods
 * behind it, what changes did; the generation each pod runs. */
static void policy(const struct ng_view *v, const struct ng_view *pv, FILE *out)
{
	const struct ng_view_policy *p = &v->policy;
	struct ng_prom_labels l;
	struct podlabels pl;

	ng_prom_family(
		out, P "agent_policy_generation", "gauge",
		"The policy generation the agent follows: the active conflist's entry, numbered from 1 "
		"(0: none yet).");
	ng_prom_u64(out, P "agent_policy_generation", NULL, p->gen);
	ng_prom_family(out, P "agent_policy_valid", "gauge",
		       "1 while the active conflist holds our entry and it is valid (else nothing running "
		       "changes and /readyz says why).");
	ng_prom_u64(out, P "agent_policy_valid", NULL, p->valid);
	ng_prom_family(out, P "agent_policy_pods_behind", "gauge",
		       "Enforced pods of the followed network not yet on the current generation (being "
		       "re-planned, or their re-plan failed).");
	ng_prom_u64(out, P "agent_policy_pods_behind", NULL, p->behind);
	ng_prom_family(
		out, P "agent_policy_changes_total", "counter",
		"Changes of the active entry, by outcome: applied (a new generation), refused (missing, "
		"unreadable or invalid: nothing running changed).");
	l = (struct ng_prom_labels){{"outcome", "applied"}};
	ng_prom_u64(out, P "agent_policy_changes_total", &l, p->changes);
	l = (struct ng_prom_labels){{"outcome", "refused"}};
	ng_prom_u64(out, P "agent_policy_changes_total", &l, p->refused);
	ng_prom_family(out, P "agent_policy_replans_total", "counter",
		       "Running pods re-planned onto a new generation, by result.");
	l = (struct ng_prom_labels){{"result", "ok"}};
	ng_prom_u64(out, P "agent_policy_replans_total", &l, p->replans);
	l = (struct ng_prom_labels){{"result", "failed"}};
	ng_prom_u64(out, P "agent_policy_replans_total", &l, p->replan_errors);
	ng_prom_family(out, P "agent_policy_grants_dropped_total", "counter",
		       "Grants dropped from running pods because a new envelope no longer covers them.");
	ng_prom_u64(out, P "agent_policy_grants_dropped_total", NULL, p->dropped);
	ng_prom_family(out, P "agent_policy_flows_cut_total", "counter",
		       "Live flows a new generation no longer admits, deleted from conntrack.");
	ng_prom_u64(out, P "agent_policy_flows_cut_total", NULL, p->cut);
	ng_prom_family(out, P "agent_policy_replan_seconds", "gauge",
		       "The last generation: from the change seen to its last pod re-planned.");
	ng_prom_double(out, P "agent_policy_replan_seconds", NULL, p->replan_seconds);
	ng_prom_family(out, P "pod_policy_generation", "gauge",
		       "The policy generation the pod runs (0: unknown).");
	for (size_t i = 0; i < pv->pods.n; i++)
		if (enforced(&pv->pods.v[i])) {
			pod_labels(&pv->pods.v[i], &pl);
			ng_prom_u64(out, P "pod_policy_generation", &pl.l, pv->pods.v[i].generation);
		}
}

bool ng_metrics_per_pod(const struct ng_view *v)
{
	return v->pod_metrics_limit < 0 || v->pods.n <= (size_t)v->pod_metrics_limit;
}

void ng_metrics_render(const struct ng_view *v, FILE *out)
{
	/* Past the bound (--pod-metrics) the per-pod families are declared
	 * with no sample: a node of short-lived sandboxes does not churn
	 * series; the node totals stay. */
	struct ng_view none = *v;
	const struct ng_view *pv = ng_metrics_per_pod(v) ? v : &none;

	none.pods.n = 0;
	decisions(pv, out);
	denied(pv, out, false, false);
	denied(pv, out, true, false);
	denied(pv, out, false, true);
	denied(pv, out, true, true);
	learned(pv, out);
	checks(pv, out);
	agent_counters(pv, out);
	invocations(v, out);
	health(v, out);
	ng_prom_family(out, P "agent_pod_metrics", "gauge",
		       "1 while per-pod series are served (--pod-metrics), 0 past its bound.");
	ng_prom_u64(out, P "agent_pod_metrics", NULL, ng_metrics_per_pod(v));
	policy(v, pv, out);
}
