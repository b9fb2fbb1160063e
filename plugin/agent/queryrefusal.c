/* What a refused query leaves behind. See queryrefusal.h. */
#include "agent/queryrefusal.h"

#include <stdio.h>

#include "base/clock.h"
#include "node/flowev.h"

#define NAME_SHOWN 60 /* bytes of a refused name the log shows (it may carry data) */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* The rcode ng_dns_refusal gives for verdict v. */
const char *ng_query_refusal_answer(const struct ng_pod *p, enum ng_dnsq_verdict v)
{
	switch (v) {
	case NG_DNSQ_OPCODE: return "NOTIMP";
	case NG_DNSQ_MALFORMED:
	case NG_DNSQ_QDCOUNT:
	case NG_DNSQ_SECTIONS: return "FORMERR";
	case NG_DNSQ_NOT_QUERY: return "nothing";
	default: return p->policy.refused_rcode == 5 ? "REFUSED" : "NXDOMAIN";
	}
}

/* Once per name per pod per minute, at most NG_REFUSAL_LOG_BURST lines a
 * minute; what that leaves out is counted in the next line. */
static void log_refusal(struct ng_pod *p, const struct ng_dns_query *q, enum ng_dnsq_verdict v, bool tcp,
			bool would)
{
	struct ng_refusal_log *l = &p->rlog;
	int64_t now = ng_mono_ms();
	uint64_t h = name_hash(q->name);
	unsigned slot = 0;
	char shown[NAME_SHOWN + 4];

	if (now - l->window_ms > NG_REFUSAL_LOG_MS) {
		l->window_ms = now;
		l->lines = 0;
	}
	for (unsigned i = 0; i < NG_REFUSAL_LOG_NAMES; i++) {
		if (l->at_ms[i] && l->hash[i] == h && now - l->at_ms[i] <= NG_REFUSAL_LOG_MS) {
			l->quiet++;
			return;
		}
		if (l->at_ms[i] < l->at_ms[slot])
			slot = i;
	}
	if (l->lines >= NG_REFUSAL_LOG_BURST) {
		l->quiet++;
		return;
	}
	l->hash[slot] = h;
	l->at_ms[slot] = now;
	l->lines++;
	ng_dns_name_short(q->name[0] ? q->name : "(no name)", NAME_SHOWN, shown, sizeof(shown));
	if (would)
		ng_pod_log("warning", "dns_query_would_refuse", p,
			   "query for %s type %u over %s would be refused (%s): audit mode "
			   "(enforce.auditNamespaces), sent to the resolver; %llu not logged before this one",
			   shown, q->qtype, tcp ? "TCP" : "UDP", ng_dnsq_verdict_name(v),
			   (unsigned long long)l->quiet);
	else
		ng_pod_log("warning", "dns_query_refused", p,
			   "query for %s type %u over %s refused (%s): answered %s by the agent, never sent; "
			   "%llu refusal(s) not logged before this one",
			   shown, q->qtype, tcp ? "TCP" : "UDP", ng_dnsq_verdict_name(v),
			   ng_query_refusal_answer(p, v), (unsigned long long)l->quiet);
	l->quiet = 0;
}

/* Into the flow log (agent/flowq.h): every refusal, within the pod's log
 * rate; the comment names the rule that queued the query and the answer
 * the pod got. */
static void flow_refusal(struct ng_pod *p, const struct ng_pkt *k, const struct ng_dns_query *q,
			 enum ng_dnsq_verdict v, bool would)
{
	struct ng_flow_ev ev = {.kind = NG_FLOW_REFUSAL, .table = NG_LOG_POD, .would_deny = would};
	char shown[NAME_SHOWN + 4];

	if (!p->flowq || !p->policy.nflog) /* "log": false: the tables log nothing either */
		return;
	if (!ng_tokens_take(&p->flow_tokens, p->policy.log_rate, p->policy.log_burst, ng_mono_ms())) {
		p->flow_skipped++;
		return;
	}
	ev.ts_ms = ng_wall_ms();
	snprintf(ev.ns, sizeof(ev.ns), "%.*s", (int)sizeof(ev.ns) - 1, p->pod.ns);
	snprintf(ev.name, sizeof(ev.name), "%.*s", (int)sizeof(ev.name) - 1, p->pod.name);
	snprintf(ev.category, sizeof(ev.category), NG_FLOW_DNS);
	ev.proto = k->proto;
	ev.src = k->src;
	ev.dst = k->dst;
	ev.have_ports = true;
	ev.sport = k->sport;
	ev.dport = k->dport;
	ng_dns_name_short(q->name[0] ? q->name : "(no name)", NAME_SHOWN, shown, sizeof(shown));
	ng_flowev_set_query(&ev, shown, q->qtype);
	if (would)
		snprintf(ev.comment, sizeof(ev.comment),
			 "queries to dns.servers, to the agent (%s): would be refused (%s), sent (audit)",
			 k->dst.fam == NG_V4 ? "IPv4" : "IPv6", ng_dnsq_verdict_name(v));
	else
		snprintf(ev.comment, sizeof(ev.comment),
			 "queries to dns.servers, to the agent (%s): refused (%s), answered %s by the agent, "
			 "never sent",
			 k->dst.fam == NG_V4 ? "IPv4" : "IPv6", ng_dnsq_verdict_name(v),
			 ng_query_refusal_answer(p, v));
	ng_flowq_push(p->flowq, &ev);
}

void ng_query_refusal_seen(struct ng_pod *p, const struct ng_pkt *k, const struct ng_dns_query *q,
			   enum ng_dnsq_verdict v, bool tcp, bool would)
{
	log_refusal(p, q, v, tcp, would);
	flow_refusal(p, k, q, v, would);
}
