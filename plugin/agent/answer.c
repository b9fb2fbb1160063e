/* A queued answer, from the queue to its verdict. See answer.h. */
#include "agent/answer.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>

#include "agent/alog.h"
#include "agent/packet.h"
#include "agent/query.h"
#include "agent/tcpflow.h"
#include "base/clock.h"

#define RX_LEN (65536 + 4096)

int ng_answer_scratch_init(struct ng_answer_scratch *s)
{
	memset(s, 0, sizeof(*s));
	s->msg = malloc(sizeof(*s->msg));
	s->rx = malloc(RX_LEN);
	if (!s->msg || !s->rx) {
		ng_answer_scratch_free(s);
		return -1;
	}
	return 0;
}

void ng_answer_scratch_free(struct ng_answer_scratch *s)
{
	free(s->msg);
	free(s->rx);
	ng_learn_result_free(&s->lr);
	ng_vec_free(&s->taught);
	ng_vec_free(&s->pending);
	ng_vec_free(&s->pending_node);
	memset(s, 0, sizeof(*s));
}

static bool from_resolver(const struct ng_pod *p, const struct ng_pkt *k)
{
	const ng_elem_vec *dns = &p->policy.dns[NG_FAM_IDX(k->src.fam)];

	if (k->sport != 53)
		return false;
	for (size_t i = 0; i < dns->n; i++)
		if (ng_ip_eq(&dns->v[i].lo, &k->src) && dns->v[i].proto == k->proto)
			return true;
	return false;
}

/* One packet's messages (UDP: one; a TCP segment: those it completes). */
struct msg_ctx {
	struct ng_pod *p;
	struct ng_pod_shared *sh;
	struct ng_answer_scratch *s;
	const struct ng_pkt *k; /* the packet that carried (or completed) it */
	int rc;                 /* -1: a message could not be planned */
	bool unseen;            /* it teaches, and the node side did not see it */
};

/* May the node side learn from this message? Only from what the node saw
 * (agent/observer.h); counted and logged (1st, 2nd, 4th, ...) when not. */
static bool node_saw(struct msg_ctx *c, const uint8_t *msg, size_t len)
{
	struct ng_pod *p = c->p;

	if (!p->node_side)
		return false;
	if (ng_observer_vouch(c->sh->obs, &p->nodeseen, c->k, msg, len))
		return true;
	p->c.node_unseen++;
	if (!(p->c.node_unseen & (p->c.node_unseen - 1)))
		ng_pod_log(
			"warning", "node_unseen", p,
			"%llu answer(s) the node never saw cross the pod's host peer in reply to its query "
			"(this one for %s): the pod's tables learned, the node side did not",
			(unsigned long long)p->c.node_unseen, c->s->msg->names[0]);
	return false;
}

/* One DNS message: parsed, matched, planned into s->pending. */
static void take_message(const uint8_t *msg, size_t len, void *data)
{
	struct msg_ctx *c = data;
	struct ng_pod *p = c->p;
	struct ng_answer_scratch *s = c->s;
	unsigned full = 0, full_node = 0;

	p->c.answers++;
	if (ng_dns_parse(msg, len, s->msg) < 0) {
		p->c.unparsed++;
		return; /* teaches nothing, passes unchanged */
	}
	/* Only the answer to a query the pod sent and that is still
	 * outstanding teaches (agent/outq.h); any other passes unlearned. */
	{
		/* Past 8 answers in one segment, a drop gives back only 8. */
		bool room = s->n_taken < sizeof(s->taken) / sizeof(s->taken[0]);
		struct ng_outq_key spare;

		if (!ng_query_answered(p, c->k, msg, len, room ? &s->taken[s->n_taken] : &spare))
			return;
		s->n_taken += room;
	}
	if (ng_learn(&p->policy, s->msg, &s->lr) < 0 ||
	    ng_tracker_plan(&p->tr, &s->lr, ng_mono_ms(), &s->pending, &full) < 0) {
		c->rc = -1;
		return;
	}
	for (size_t i = 0; i < s->lr.pairs.n; i++)
		if (ng_vec_push(&s->taught, &s->lr.pairs.v[i]) < 0) {
			c->rc = -1;
			return;
		}
	/* The node side, for an answer that teaches something (the same
	 * bound: counted once, on the pod's side). */
	if (s->lr.single[0].n + s->lr.single[1].n + s->lr.ranges[0].n + s->lr.ranges[1].n && p->node_side) {
		if (!node_saw(c, msg, len))
			c->unseen = true;
		else if (ng_tracker_plan(&p->tr_node, &s->lr, ng_mono_ms(), &s->pending_node, &full_node) <
			 0) {
			c->rc = -1;
			return;
		}
	}
	/* Both are the pod's own doing, answer after answer: logged as the
	 * count passes a power of two (agent/alog.h), counted always. */
	p->c.full += full;
	if (ng_alog_due(p->c.full, full))
		ng_pod_log("warning", "tracker_full", p,
			   "%llu element(s) not learned so far, %u tracked (the bound; this answer's, for "
			   "%s: %u)",
			   (unsigned long long)p->c.full, ng_tracker_count(&p->tr), s->msg->names[0], full);
	p->c.metadata += s->lr.metadata;
	if (ng_alog_due(p->c.metadata, s->lr.metadata))
		ng_pod_log("warning", "metadata_refused", p,
			   "%llu metadata address(es) refused so far (this answer's, for %s: %u): not "
			   "learned",
			   (unsigned long long)p->c.metadata, s->msg->names[0], s->lr.metadata);
}

/* Commits what the packet's messages planned; false when they could not
 * be planned or committed (the tracker then forgets the plan: it must
 * never claim an element the kernel does not hold). */
static bool commit_planned(struct ng_pod_shared *sh, const struct msg_ctx *c)
{
	struct ng_pod *p = c->p;

	if (c->rc < 0) {
		ng_tracker_revert(&p->tr, &c->s->pending);
		ng_tracker_revert(&p->tr_node, &c->s->pending_node);
		return false;
	}
	if (ng_pod_commit(p, sh, &c->s->pending, &c->s->pending_node) != 0)
		return false;
	/* Committed: which name taught each address (status --names). */
	for (size_t i = 0; i < c->s->taught.n; i++)
		if (ng_taught_note(&p->taught, c->s->taught.v[i].entry, &c->s->taught.v[i].ip) > 0)
			p->learned_gen++;
	c->s->taught.n = 0;
	return true;
}

static uint32_t tcp_verdict(struct ng_pod_shared *sh, const struct ng_pkt *k, struct msg_ctx *c)
{
	struct ng_tcpflow *f;
	uint32_t v = NF_ACCEPT;
	int n;

	/* The connection a refused query ended: the pod was answered by the
	 * agent, nothing more from the resolver's side reaches it. */
	if (ng_query_flow_ended(c->p, k))
		return NF_DROP;
	f = ng_tcp_flow(&c->p->tcp, k, ng_mono_ms());
	if (!f)
		return k->payload_len || (k->tcp_flags & NG_TCP_SYN) ? NF_DROP : NF_ACCEPT;
	n = ng_tcp_segment(f, k, &sh->tcp_budget, take_message, c);
	if (n < 0 || (n > 0 && !commit_planned(sh, c)))
		v = NF_DROP; /* a gap or a bound; or the commit did not happen */
	if (n >= 0)
		ng_tcp_done(f, v == NF_ACCEPT, &sh->tcp_budget);
	/* A FIN ends the flow only in order (after every byte before it): one
	 * past a dropped segment would leave that segment's retransmission
	 * with no flow to land in. */
	if (v == NF_ACCEPT && ((k->tcp_flags & NG_TCP_RST) ||
			       ((k->tcp_flags & NG_TCP_FIN) && k->seq + (uint32_t)k->payload_len == f->next)))
		ng_tcp_close(f, &sh->tcp_budget);
	return v;
}

uint32_t ng_answer_packet(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_answer_scratch *s,
			  const struct ng_nfq_packet *pk)
{
	struct ng_pkt k;
	struct msg_ctx c = {.p = p, .sh = sh, .s = s, .k = &k};
	uint32_t v = NF_ACCEPT;

	s->pending.n = 0;
	s->pending_node.n = 0;
	s->taught.n = 0;
	s->n_taken = 0;
	/* Our egress chain queues the pod's queries in the output hook, out
	 * on the pod's interface (agent/query.h). */
	if (pk->hook == NF_INET_LOCAL_OUT && pk->outdev == p->ifindex && p->ifindex) {
		if (ng_pkt_parse(pk->data, pk->len, &k) < 0)
			return NF_DROP;
		return ng_query_packet(p, sh, &k, pk->id);
	}
	/* Our dns_answers chain queues in the input hook, on the pod's
	 * interface, and nowhere else. */
	if (pk->hook != NF_INET_LOCAL_IN || pk->indev != p->ifindex) {
		v = NF_DROP;
		/* Someone else's queue rule: worth an operator's eye (logged at
		 * the 1st, 2nd, 4th, 8th, ... so a flood cannot flood the log). */
		p->c.foreign++;
		if (!(p->c.foreign & (p->c.foreign - 1)))
			ng_pod_log("warning", "queue_foreign", p,
				   "%llu packet(s) not queued by the agent's chain (this one: hook %u, in on "
				   "ifindex %u, the pod's %s is %u): dropped; does the pod hold NET_ADMIN?",
				   (unsigned long long)p->c.foreign, pk->hook, pk->indev, p->pod.ifname,
				   p->ifindex);
	} else if (ng_pkt_parse(pk->data, pk->len, &k) < 0) {
		v = NF_DROP;
	} else if (!from_resolver(p, &k)) {
		v = NF_ACCEPT; /* the rule queues only resolvers' port 53: nothing to learn */
	} else if (k.proto == 17) {
		take_message(k.payload, k.payload_len, &c);
		/* An answer the node side did not learn from would name an
		 * address the host side refuses: dropped (the client asks again,
		 * and that answer crosses the host peer), never released to a
		 * connect that fails. Over TCP the segment passes: a dropped one
		 * would come back as a retransmission the observer has already
		 * passed (README "What the node side cannot see"). */
		if (!commit_planned(sh, &c) || c.unseen)
			v = NF_DROP;
	} else {
		v = tcp_verdict(sh, &k, &c);
	}
	if (v == NF_DROP) {
		p->c.dropped++;
		for (unsigned i = 0; i < s->n_taken; i++)
			ng_outq_add(&p->oq, &s->taken[i], ng_mono_ms());
	}
	return v;
}

struct serve_ctx {
	struct ng_pod *p;
	struct ng_pod_shared *sh;
	struct ng_answer_scratch *s;
};

static void one_packet(const struct ng_nfq_packet *pk, void *data)
{
	struct serve_ctx *c = data;

	uint32_t v = ng_answer_packet(c->p, c->sh, c->s, pk);

	/* Only now, after every table acknowledged: the verdict (a query
	 * segment held for the rest of its message gets it later). */
	if (v != NG_VERDICT_HELD)
		ng_nfq_verdict(&c->p->q, pk->id, v);
}

void ng_answer_serve(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_answer_scratch *s)
{
	struct serve_ctx c = {p, sh, s};

	/* At most NG_ANSWER_BUDGET answers a turn; the epoll is level-triggered
	 * and hands out ready queues in turn, so what is left waits for every
	 * other pod's turn: a pod flooding answers delays its own. */
	int n = ng_nfq_read(&p->q, s->rx, RX_LEN, NG_ANSWER_BUDGET, one_packet, &c);

	if (n < 0)
		ng_pod_log("error", "queue_read", p, "%s", strerror(errno));
	else if (n >= NG_ANSWER_BUDGET)
		p->c.queue_budget++;
}
