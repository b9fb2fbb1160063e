#include "node/nodeview.h"

#include <stdio.h>
#include <string.h>

const struct ng_agent_counter_def ng_agent_counter_defs[NG_AC_COUNT] = {
	[NG_AC_ANSWERS] = {"dns_answers_total", "DNS answers to the pod seen by the agent."},
	[NG_AC_LEARNED] = {"learned_elements_total",
			   "Set elements the agent added or refreshed from answers."},
	[NG_AC_KEPT_ALIVE] = {"kept_alive_total",
			      "Refreshes of learned addresses kept alive by live connections."},
	[NG_AC_METADATA] = {"metadata_refused_total",
			    "Metadata addresses in answers that were never learned."},
	[NG_AC_UNPARSED] = {"dns_unparsed_total", "Answers that did not parse (passed, nothing learned)."},
	[NG_AC_FULL] = {"learn_full_total", "Elements refused by the per-pod bound on learned elements."},
	[NG_AC_COMMITS] = {"commits_total", "Set update transactions the kernel acknowledged."},
	[NG_AC_COMMIT_ERRORS] = {"commit_errors_total", "Set update transactions the kernel refused."},
	[NG_AC_DROPPED] = {"dns_dropped_total", "Answers dropped (fail closed) because learning failed."},
	[NG_AC_EXPIRED] = {"expired_elements_total", "Learned elements whose lifetime ran out."},
	[NG_AC_NODE_UNSEEN] = {"node_unseen_total",
			       "Answers the node-side table did not learn from: the node never saw them "
			       "answer the pod's query across its host peer."},
	[NG_AC_NODE_UNMATCHED] =
		{"node_unmatched_total",
		 "Answers the node saw cross a host peer that matched no outstanding query."},
	[NG_AC_OBSERVER_LOST] = {"observer_lost_total",
				 "Times the node-side observer fell behind and the kernel dropped copies "
				 "(the node side learned nothing from them)."},
	[NG_AC_QUERIES] = {"dns_queries_total", "DNS queries from the pod seen by the agent."},
	[NG_AC_REFUSED] = {"dns_queries_refused_total",
			   "DNS queries refused (never sent to a resolver, answered at once by the agent)."},
	[NG_AC_WOULD_REFUSE] =
		{"dns_queries_would_refuse_total",
		 "DNS queries an audited pod (enforce.auditNamespaces) would have had refused: "
		 "sent to the resolver, logged and counted as would_deny."},
	[NG_AC_UNMATCHED] =
		{"dns_answers_unmatched_total",
		 "Answers that answer no outstanding query of the pod (passed, nothing learned)."},
	[NG_AC_OUTQ_FULL] = {"dns_outstanding_full_total",
			     "Outstanding queries forgotten to make room (the per-pod bound was hit)."},
	[NG_AC_QUEUE_BUDGET] = {"queue_budget_hits_total",
				"Turns at which the pod's queue held more answers than its per-turn budget "
				"(NG_ANSWER_BUDGET): the rest waited for the other pods' turns."},
	[NG_AC_KA_DEFERRED] = {"keepalive_deferred_total",
			       "Due learned elements left to a later sweep by the per-pod keep-alive budget "
			       "(NG_KA_ELEMS per sweep)."},
	[NG_AC_KA_CUT] = {"keepalive_cut_total",
			  "Keep-alive conntrack lookups cut at the per-lookup entry budget (NG_KA_ENTRIES)."},
};

const char *const ng_inv_verbs[NG_INV_VERBS] = {"ADD", "DEL", "CHECK", "STATUS", "GC", "VERSION"};

void ng_invtotals_add(struct ng_invtotals *t, const struct ng_inv *inv)
{
	unsigned i;

	for (int k = 0; k < NG_INV_VERBS; k++)
		if (!strcmp(ng_inv_verbs[k], inv->verb))
			ng_hist_observe(&t->hist[k], inv->us);
	for (i = 0; i < t->nrows; i++)
		if (!strcmp(t->row[i].verb, inv->verb) && !strcmp(t->row[i].decision, inv->decision))
			break;
	if (i == t->nrows) {
		if (i == sizeof(t->row) / sizeof(t->row[0])) {
			t->other++;
			return;
		}
		memcpy(t->row[i].verb, inv->verb, sizeof(t->row[i].verb));
		memcpy(t->row[i].decision, inv->decision, sizeof(t->row[i].decision));
		t->nrows++;
	}
	t->row[i].n++;
}

void ng_view_pod_free(struct ng_view_pod *p)
{
	ng_vec_free(&p->counters);
	ng_vec_free(&p->names);
	ng_vec_free(&p->taught_names);
	ng_vec_free(&p->taught);
}

void ng_view_free(struct ng_view *v)
{
	for (size_t i = 0; i < v->pods.n; i++)
		ng_view_pod_free(&v->pods.v[i]);
	ng_vec_free(&v->pods);
}

void ng_view_name_set(struct ng_view_name *vn, const struct ng_name_entry *e)
{
	const char *proto = e->proto == 17 ? "udp" : "tcp";

	memset(vn, 0, sizeof(*vn));
	snprintf(vn->name, sizeof(vn->name), "%s%s", e->wildcard ? "*." : "", e->name);
	if (e->p_lo == e->p_hi)
		snprintf(vn->proto_ports, sizeof(vn->proto_ports), "%s/%u", proto, e->p_lo);
	else
		snprintf(vn->proto_ports, sizeof(vn->proto_ports), "%s/%u-%u", proto, e->p_lo, e->p_hi);
}

struct ng_view_pod *ng_view_find(struct ng_view *v, const char *key)
{
	for (size_t i = 0; i < v->pods.n; i++)
		if (!strcmp(v->pods.v[i].key, key))
			return &v->pods.v[i];
	return NULL;
}
