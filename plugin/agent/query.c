/* A queued query, from the queue to its verdict. See query.h. */
#include "agent/query.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <string.h>

#include "agent/pktbuild.h"
#include "agent/queryrefusal.h"
#include "base/clock.h"
#include "policy/dnsquery.h"

#define PKT_MAX (60 + 20 + 2 + 12 + NG_OUTQ_QLEN)

static bool to_resolver(const struct ng_pod *p, const struct ng_pkt *k)
{
	const ng_elem_vec *dns = &p->policy.dns[NG_FAM_IDX(k->dst.fam)];

	if (k->dport != 53)
		return false;
	for (size_t i = 0; i < dns->n; i++)
		if (ng_ip_eq(&dns->v[i].lo, &k->dst) && dns->v[i].proto == k->proto)
			return true;
	return false;
}

/* Writes a packet into the pod's namespace (kernel/rawsend.h). */
static void inject(struct ng_pod *p, const struct ng_pktspec *s, const uint8_t *payload, size_t len)
{
	uint8_t pkt[PKT_MAX];
	size_t n = ng_pkt_build(s, payload, len, pkt, sizeof(pkt));

	if (n == 0 || ng_rawsend(&p->raw, &s->dst, pkt, n) < 0) {
		/* Logged at the 1st, 2nd, 4th, ... failure. */
		p->send_errors++;
		if (!(p->send_errors & (p->send_errors - 1)))
			ng_pod_log("error", "dns_refusal_send", p,
				   "%llu answer(s) to refused queries not sent (this one: %s)",
				   (unsigned long long)p->send_errors, n == 0 ? "too long" : strerror(errno));
	}
}

static void remember(struct ng_pod *p, const struct ng_pkt *k, const uint8_t *msg, size_t len)
{
	struct ng_outq_key key;

	if (ng_outq_key_of(msg, len, &k->dst, k->proto, k->sport, &key) < 0)
		return; /* no question: no answer to it can teach */
	if (ng_outq_add(&p->oq, &key, ng_mono_ms()) == 1) {
		p->c.outq_full++;
		if (!(p->c.outq_full & (p->c.outq_full - 1)))
			ng_pod_log("warning", "dns_outstanding_full", p,
				   "%u queries outstanding: the oldest forgotten (%llu so far); its answer "
				   "will teach nothing",
				   NG_OUTQ_MAX, (unsigned long long)p->c.outq_full);
	}
}

/* An audited pod's query that "listed" would refuse (enforce.auditNamespaces:
 * every refusal but cloud metadata's is logged, counted as would_deny and
 * let through): true when it goes on to the resolver. */
static bool audited(struct ng_pod *p, const struct ng_pkt *k, const struct ng_dns_query *q,
		    enum ng_dnsq_verdict v, bool tcp)
{
	if (!p->policy.audit)
		return false;
	p->c.would_refuse++;
	ng_query_refusal_seen(p, k, q, v, tcp, true);
	return true;
}

/* ---- UDP ------------------------------------------------------------------ */

static uint32_t udp_query(struct ng_pod *p, const struct ng_pkt *k)
{
	struct ng_dns_query q;
	enum ng_dnsq_verdict v = ng_dns_query_judge(&p->policy, k->payload, k->payload_len, &q);
	uint8_t ans[12 + NG_OUTQ_QLEN];
	size_t n;

	p->c.queries++;
	if (v == NG_DNSQ_OK || !p->policy.queries_listed || audited(p, k, &q, v, false)) {
		remember(p, k, k->payload, k->payload_len);
		return NF_ACCEPT;
	}
	p->c.refused++;
	ng_query_refusal_seen(p, k, &q, v, false, false);
	n = ng_dns_refusal(k->payload, k->payload_len, &q, v, p->policy.refused_rcode, ans, sizeof(ans));
	if (n)
		inject(p,
		       &(struct ng_pktspec){
			       .src = k->dst, .dst = k->src, .proto = 17, .sport = 53, .dport = k->sport},
		       ans, n);
	return NF_DROP;
}

/* ---- TCP ------------------------------------------------------------------ */

/* The segment as the flow table keys it: the resolver as the peer. */
static struct ng_pkt turned(const struct ng_pkt *k)
{
	struct ng_pkt t = *k;

	t.src = k->dst;
	t.dst = k->src;
	t.sport = k->dport;
	t.dport = k->sport;
	return t;
}

/* The answer side of the same connection (agent/answer.c's flow). */
static struct ng_tcpflow *answer_flow(struct ng_pod *p, const struct ng_pkt *k)
{
	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		struct ng_tcpflow *f = &p->tcp.f[i];

		if (f->used && f->sport == k->dport && f->dport == k->sport && ng_ip_eq(&f->peer, &k->dst))
			return f;
	}
	return NULL;
}

/* What one segment's messages came to. */
struct tcp_ctx {
	struct ng_pod *p;
	const struct ng_pkt *k;
	bool refused;
	struct ng_dns_query q;
	enum ng_dnsq_verdict v;
	uint8_t ans[2 + 12 + NG_OUTQ_QLEN];
	size_t ans_len;
};

static void tcp_message(const uint8_t *msg, size_t len, void *data)
{
	struct tcp_ctx *c = data;
	struct ng_dns_query q;
	enum ng_dnsq_verdict v;

	if (c->refused)
		return; /* the connection ends at the first refused message */
	c->p->c.queries++;
	v = ng_dns_query_judge(&c->p->policy, msg, len, &q);
	if (v == NG_DNSQ_OK || !c->p->policy.queries_listed || audited(c->p, c->k, &q, v, true)) {
		struct ng_outq_key key;

		/* Remembered now: an answer cannot come before the verdict. A
		 * segment dropped later leaves an entry that expires. */
		if (ng_outq_key_of(msg, len, &c->k->dst, 6, c->k->sport, &key) == 0 &&
		    ng_outq_add(&c->p->oq, &key, ng_mono_ms()) == 1)
			c->p->c.outq_full++;
		return;
	}
	c->refused = true;
	c->q = q;
	c->v = v;
	c->ans_len =
		ng_dns_refusal(msg, len, &q, v, c->p->policy.refused_rcode, c->ans + 2, sizeof(c->ans) - 2);
	if (c->ans_len) {
		c->ans[0] = (uint8_t)(c->ans_len >> 8);
		c->ans[1] = (uint8_t)c->ans_len;
		c->ans_len += 2;
	}
}

static void drop_held(struct ng_pod *p, struct ng_tcpflow *f)
{
	for (unsigned i = 0; i < f->n_held; i++)
		ng_nfq_verdict(&p->q, f->held[i], NF_DROP);
	f->n_held = 0;
}

/* A TCP segment of connection k (a segment the pod sent) written as the
 * resolver would send it to the pod. */
static void to_pod(struct ng_pod *p, const struct ng_pkt *k, uint32_t seq, uint32_t ack, uint8_t flags,
		   const uint8_t *data, size_t len)
{
	inject(p,
	       &(struct ng_pktspec){.src = k->dst,
				    .dst = k->src,
				    .proto = 6,
				    .sport = 53,
				    .dport = k->sport,
				    .seq = seq,
				    .ack = ack,
				    .flags = flags},
	       data, len);
}

/* A refused message: the resolver's side reset where it stands (at the
 * first byte it has not been given), the pod's side answered on the
 * stream and closed. Every later segment of the connection is dropped. */
static void end_refused(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_tcpflow *f,
			const struct ng_pkt *k, const struct tcp_ctx *c)
{
	struct ng_tcpflow *a = answer_flow(p, k);
	uint32_t seg_end = k->seq + ((k->tcp_flags & NG_TCP_SYN) ? 1u : 0u) + (uint32_t)k->payload_len;
	/* The pod's next expected byte from the resolver: what the agent let
	 * through on the answer side (delivered before this segment was
	 * queued), else what the pod acknowledged. */
	uint32_t rseq = a && a->len == 0 ? a->next : k->ack;
	bool half = a && a->len;

	drop_held(p, f);
	f->refused = true;
	inject(p,
	       &(struct ng_pktspec){.src = k->src,
				    .dst = k->dst,
				    .proto = 6,
				    .sport = k->sport,
				    .dport = 53,
				    .seq = f->rel,
				    .flags = NG_TCP_RST},
	       NULL, 0);
	/* The answer side is done: what the resolver still sends is dropped
	 * (ng_query_flow_ended while this flow lasts, then as bytes of no
	 * flow), and its slot is free again. */
	if (a)
		ng_tcp_close(a, &sh->tcp_budget);
	if (half) {
		/* Half an answer on the stream: no place for ours. Reset. */
		f->inj_seq = rseq;
		to_pod(p, k, rseq, 0, NG_TCP_RST, NULL, 0);
		return;
	}
	to_pod(p, k, rseq, seg_end, NG_TCP_ACK | NG_TCP_PSH | NG_TCP_FIN, c->ans, c->ans_len);
	f->inj_seq = rseq + (uint32_t)c->ans_len + 1;
}

static void release(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_tcpflow *f)
{
	drop_held(p, f);
	ng_tcp_close(f, &sh->tcp_budget);
}

/* A segment of a connection a refusal ended: our own reset goes; anything
 * else (the pod's ACK of the answer, its FIN) is dropped and answered with
 * a reset, and the flow goes: the pod's side is closed. */
static uint32_t after_refusal(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_tcpflow *f,
			      const struct ng_pkt *k)
{
	if (k->tcp_flags & NG_TCP_RST)
		return k->payload_len ? NF_DROP : NF_ACCEPT;
	to_pod(p, k, f->inj_seq, 0, NG_TCP_RST, NULL, 0);
	release(p, sh, f);
	return NF_DROP;
}

/* No slot for a new connection: the one idle longest gives its slot, if
 * idle for NG_TCP_RECLAIM_MS and holding nothing (a live connection whose
 * flow went would have its next message dropped). */
#define NG_TCP_RECLAIM_MS 5000
static bool reclaim(struct ng_pod *p, struct ng_pod_shared *sh)
{
	struct ng_tcpflow *old = NULL;
	int64_t now = ng_mono_ms();

	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		struct ng_tcpflow *f = &p->qtcp.f[i];

		if (f->used && !f->n_held && now - f->last_ms > NG_TCP_RECLAIM_MS &&
		    (!old || f->last_ms < old->last_ms))
			old = f;
	}
	if (old)
		release(p, sh, old);
	return old != NULL;
}

static uint32_t tcp_query(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_pkt *k, uint32_t id)
{
	struct ng_pkt t = turned(k);
	struct ng_tcpflow *f;
	uint32_t seq = k->seq + ((k->tcp_flags & NG_TCP_SYN) ? 1u : 0u);
	uint32_t end = seq + (uint32_t)k->payload_len;
	struct tcp_ctx c = {.p = p, .k = k};
	int n;

	/* The pod's SYN opens a flow; a segment of no flow we know (the
	 * agent restarted, or no slot was free) passes only without bytes. */
	f = ng_tcp_flow(&p->qtcp, &t, ng_mono_ms());
	if (!f && (k->tcp_flags & NG_TCP_SYN) && reclaim(p, sh))
		f = ng_tcp_flow(&p->qtcp, &t, ng_mono_ms());
	if (!f)
		return k->payload_len ? NF_DROP : NF_ACCEPT;
	if ((k->tcp_flags & NG_TCP_SYN) && f->next == seq && f->len == 0) {
		/* A new connection (or its SYN again): nothing let through yet. */
		drop_held(p, f);
		f->rel = seq;
		f->refused = false;
	}
	if (f->refused)
		return after_refusal(p, sh, f, k);
	if (k->payload_len == 0) {
		/* An ACK, a SYN, a FIN, a reset: nothing to judge. A FIN or RST
		 * after held bytes would strand them: dropped (TCP resends). */
		if ((k->tcp_flags & (NG_TCP_FIN | NG_TCP_RST)) && f->n_held)
			return NF_DROP;
		/* The pod's side is done (an in-order FIN: every byte before
		 * it judged), or reset: the flow goes. */
		if ((k->tcp_flags & NG_TCP_RST) || ((k->tcp_flags & NG_TCP_FIN) && seq == f->next))
			release(p, sh, f);
		return NF_ACCEPT;
	}
	/* Bytes all let through before: a retransmission. */
	if ((int32_t)(end - f->rel) <= 0)
		return NF_ACCEPT;
	/* Overlapping bytes still held: the held segment will carry them. */
	if (f->n_held && seq != f->next)
		return NF_DROP;
	n = ng_tcp_segment(f, &t, &sh->tcp_budget, tcp_message, &c);
	if (n < 0)
		return NF_DROP; /* a gap or a bound: rewound, TCP resends */
	ng_tcp_done(f, true, &sh->tcp_budget);
	if (c.refused) {
		p->c.refused++;
		ng_query_refusal_seen(p, k, &c.q, c.v, true, false);
		end_refused(p, sh, f, k, &c);
		return NF_DROP;
	}
	if (f->len) {
		/* A message begun and not complete: nothing of it leaves yet. */
		if (f->n_held == NG_TCP_HELD) {
			drop_held(p, f);
			f->refused = true;
			f->inj_seq = k->ack;
			return after_refusal(p, sh, f, k);
		}
		f->held[f->n_held++] = id;
		return NG_VERDICT_HELD;
	}
	/* Every message complete and allowed: what was held goes, in order. */
	for (unsigned i = 0; i < f->n_held; i++)
		ng_nfq_verdict(&p->q, f->held[i], NF_ACCEPT);
	f->n_held = 0;
	f->rel = end;
	if (k->tcp_flags & NG_TCP_FIN)
		ng_tcp_close(f, &sh->tcp_budget);
	return NF_ACCEPT;
}

/* ---- the module's calls ---------------------------------------------------- */

uint32_t ng_query_packet(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_pkt *k, uint32_t id)
{
	if (!to_resolver(p, k)) {
		/* Our rule queues nothing else: someone else's queue rule in the
		 * output hook (a pod with NET_ADMIN), logged like the answer
		 * side's (1st, 2nd, 4th, ...). */
		p->c.foreign++;
		if (!(p->c.foreign & (p->c.foreign - 1)))
			ng_pod_log(
				"warning", "queue_foreign", p,
				"%llu packet(s) not queued by the agent's chain (this one: hook 3 = output, "
				"from port %u to port %u, not a query to dns.servers): dropped; does the pod "
				"hold NET_ADMIN?",
				(unsigned long long)p->c.foreign, k->sport, k->dport);
		return NF_DROP;
	}
	if (k->proto == 17)
		return udp_query(p, k);
	return tcp_query(p, sh, k, id);
}

bool ng_query_answered(struct ng_pod *p, const struct ng_pkt *k, const uint8_t *msg, size_t len,
		       struct ng_outq_key *taken)
{
	if (ng_outq_key_of(msg, len, &k->src, k->proto, k->dport, taken) == 0 &&
	    ng_outq_take(&p->oq, taken, ng_mono_ms()))
		return true;
	p->c.unmatched++;
	if (!(p->c.unmatched & (p->c.unmatched - 1)))
		ng_pod_log("warning", "dns_answer_unmatched", p,
			   "%llu answer(s) to no outstanding query of the pod (this one from port %u to port "
			   "%u): "
			   "passed, nothing learned",
			   (unsigned long long)p->c.unmatched, k->sport, k->dport);
	return false;
}

bool ng_query_flow_ended(const struct ng_pod *p, const struct ng_pkt *k)
{
	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		const struct ng_tcpflow *f = &p->qtcp.f[i];

		if (f->used && f->refused && f->sport == k->sport && f->dport == k->dport &&
		    ng_ip_eq(&f->peer, &k->src))
			return true;
	}
	return false;
}

void ng_query_sweep(struct ng_pod *p, struct ng_pod_shared *sh, int64_t now_ms)
{
	ng_outq_expire(&p->oq, now_ms);
	for (int i = 0; i < NG_TCP_FLOWS; i++)
		if (p->qtcp.f[i].used && now_ms - p->qtcp.f[i].last_ms > NG_TCP_IDLE_MS)
			release(p, sh, &p->qtcp.f[i]);
}
