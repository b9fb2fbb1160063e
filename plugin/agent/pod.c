/* One pod in the learner: opened from its record, committed to, swept,
 * freed. See pod.h. */
#include "agent/pod.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/alog.h"
#include "base/clock.h"
#include "kernel/learnedset.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "nft/render.h"
#include "state/recpolicy.h"

/* Live connections keep an address when it would expire within this. */
#define KEEPALIVE_WINDOW_MS 15000

void ng_pod_log(const char *level, const char *event, const struct ng_pod *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ng_alogv(level, event, p ? p->policy.pod : NULL, p ? p->key : NULL, fmt, ap);
	va_end(ap);
}

void ng_counters_add(struct ng_counters *to, const struct ng_counters *c)
{
	to->answers += c->answers;
	to->learned += c->learned;
	to->kept_alive += c->kept_alive;
	to->metadata += c->metadata;
	to->unparsed += c->unparsed;
	to->full += c->full;
	to->commits += c->commits;
	to->commit_errors += c->commit_errors;
	to->dropped += c->dropped;
	to->foreign += c->foreign;
	to->expired += c->expired;
	to->node_unseen += c->node_unseen;
	to->node_unmatched += c->node_unmatched;
	to->queries += c->queries;
	to->refused += c->refused;
	to->unmatched += c->unmatched;
	to->outq_full += c->outq_full;
	to->queue_budget += c->queue_budget;
	to->ka_deferred += c->ka_deferred;
	to->ka_cut += c->ka_cut;
}

void ng_counters_export(const struct ng_counters *c, uint64_t ac[NG_AC_COUNT])
{
	ac[NG_AC_ANSWERS] += c->answers;
	ac[NG_AC_LEARNED] += c->learned;
	ac[NG_AC_KEPT_ALIVE] += c->kept_alive;
	ac[NG_AC_METADATA] += c->metadata;
	ac[NG_AC_UNPARSED] += c->unparsed;
	ac[NG_AC_FULL] += c->full;
	ac[NG_AC_COMMITS] += c->commits;
	ac[NG_AC_COMMIT_ERRORS] += c->commit_errors;
	ac[NG_AC_DROPPED] += c->dropped;
	ac[NG_AC_EXPIRED] += c->expired;
	ac[NG_AC_NODE_UNSEEN] += c->node_unseen;
	ac[NG_AC_NODE_UNMATCHED] += c->node_unmatched;
	ac[NG_AC_QUERIES] += c->queries;
	ac[NG_AC_REFUSED] += c->refused;
	ac[NG_AC_WOULD_REFUSE] += c->would_refuse;
	ac[NG_AC_UNMATCHED] += c->unmatched;
	ac[NG_AC_OUTQ_FULL] += c->outq_full;
	ac[NG_AC_QUEUE_BUDGET] += c->queue_budget;
	ac[NG_AC_KA_DEFERRED] += c->ka_deferred;
	ac[NG_AC_KA_CUT] += c->ka_cut;
}

/* ---- opening a pod ------------------------------------------------------- */

/* The pod's policy, exactly as ADD compiled it, from the record
 * (state/recpolicy.h): the same path ADD, CHECK and verify take. */
static int rebuild_policy(const struct ng_record *r, struct ng_policy *pol, struct ng_err *err)
{
	if (ng_record_policy(r, pol, err) < 0)
		return -1;
	if (!pol->learn) {
		ng_policy_free(pol);
		return ng_fail(err, NG_E_CONFIG, "the pod learns no names (egress.names is not \"learn\")");
	}
	return 0;
}

/* The record's tables, as the commit names them. */
static int take_tables(const struct ng_record *r, ng_learned_table_vec *out)
{
	for (size_t i = 0; i < r->tables.n; i++) {
		struct ng_learned_table t = {.in_node = r->tables.v[i].in_node,
					     .family = r->tables.v[i].family};

		snprintf(t.name, sizeof(t.name), "%s", r->tables.v[i].name);
		if (ng_vec_push(out, &t) < 0)
			return -1;
	}
	return 0;
}

struct dump_ctx {
	struct ng_pod *p;
	struct ng_tracker *tr;
	bool ranged;
	int64_t now;
};

/* One element of a learned set: back into the tracker. */
static void learned_one(const struct ng_elem *el, uint64_t left, void *data)
{
	struct dump_ctx *c = data;
	uint64_t cap = (uint64_t)ng_learn_lifetime(&c->p->policy, UINT32_MAX) * 1000;
	struct ng_elem e = *el;

	/* Never longer than the agent itself would have learned it for: the
	 * element may not be the agent's. */
	if (left > cap)
		left = cap;
	if (e.timeout > cap / 1000)
		e.timeout = (uint32_t)(cap / 1000);
	/* Our view must never outlive the kernel's: a second less. */
	if (left > 1000)
		ng_tracker_learned(c->tr, &e, c->ranged, c->now + (int64_t)left - 1000);
}

/* One table's learned sets into tracker `tr`; false when the table is
 * not there. */
static bool reread_table(struct ng_pod *p, struct ng_tracker *tr, struct ng_nl *nl, uint8_t family,
			 const char *table)
{
	struct ng_err err = {0};
	bool there = false;

	for (int f = 0; f < 2; f++)
		for (int ranged = 0; ranged < 2; ranged++) {
			struct dump_ctx c = {p, tr, ranged != 0, ng_mono_ms()};

			there |= ng_learned_each(nl, family, table, &p->sets[ng_learned_set(f, ranged != 0)],
						 learned_one, &c, &err) != -ENOENT;
		}
	return there;
}

/* After a restart: what the kernel still holds is what was learned, each
 * side's tracker from its own side's table. A process in the pod with
 * NET_ADMIN can add to the pod's own sets (and so to what the pod's
 * tracker keeps alive there), never to the node side's. The pod's table
 * gone (deleted while no agent ran; the repair comes next): what the node
 * side learned, the pod's side had learned too (the node side learns only
 * answers the node saw, which the pod's queue showed as well), so the
 * repair carries that back instead of closing those names. */
static void reread_learned(struct ng_pod *p, struct ng_nl *node_nl)
{
	bool pod_there = reread_table(p, &p->tr, &p->nl, NFPROTO_INET, NG_TABLE);

	for (size_t i = 0; i < p->tables.n; i++) {
		const struct ng_learned_table *t = &p->tables.v[i];

		if (!t->in_node || !node_nl)
			continue;
		reread_table(p, &p->tr_node, node_nl, t->family, t->name);
		if (!pod_there)
			reread_table(p, &p->tr, node_nl, t->family, t->name);
	}
}

static int open_sockets(struct ng_pod *p, struct ng_err *err)
{
	int fd, rc = ng_netns_open_pod(&p->pod, &fd, err);

	if (rc > 0)
		return ng_fail(err, NG_E_NETNS, "%s is gone, or no longer the pod's network namespace",
			       p->pod.netns ? p->pod.netns : "(no namespace)");
	if (rc < 0)
		return -1;
	rc = ng_nfq_open_netns(fd, NG_AGENT_QUEUE, &p->q, err);
	if (rc == 0)
		rc = ng_nl_open_netns(fd, NULL, &p->nl, err);
	if (rc == 0)
		rc = ng_rawsend_open_netns(fd, &p->raw, err);
	close(fd);
	return rc;
}

int ng_pod_open(struct ng_record *r, struct ng_pod_shared *sh, struct ng_pod **out, struct ng_err *err)
{
	struct ng_pod *p = calloc(1, sizeof(*p));

	if (!p)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	p->q.fd = p->nl.fd = p->raw.fd4 = p->raw.fd6 = -1;
	p->flowq = sh->flowq;
	snprintf(p->key, sizeof(p->key), "%s", r->key);
	snprintf(p->nonce, sizeof(p->nonce), "%s", r->nonce);
	p->ifindex = r->have_link ? (uint32_t)r->link.ifindex : 0;
	if (take_tables(r, &p->tables) < 0) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		goto fail;
	}
	if (rebuild_policy(r, &p->policy, err) < 0)
		goto fail;
	if (ng_taught_init(&p->taught, &p->policy) < 0) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		goto fail;
	}
	p->pod = r->pod; /* handed over */
	memset(&r->pod, 0, sizeof(r->pod));
	if (!p->pod.container_id[0]) {
		ng_fail(err, NG_E_DECODE, "the record names no container");
		goto fail;
	}
	if (open_sockets(p, err) < 0)
		goto fail;
	ng_render_set_specs(&p->policy, p->sets);
	for (size_t i = 0; i < p->tables.n; i++)
		p->node_side |= p->tables.v[i].in_node;
	/* Watched on its recorded host peer: what the node saw of its DNS. */
	p->nodeseen.host_ifindex = (uint32_t)p->policy.host_ifindex;
	if (p->node_side && sh->obs && ng_observer_add(sh->obs, &p->nodeseen) < 0) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		goto fail;
	}
	reread_learned(p, sh->node_nl);
	*out = p;
	return 0;
fail:
	ng_pod_free(p, sh);
	return -1;
}

void ng_pod_free(struct ng_pod *p, struct ng_pod_shared *sh)
{
	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		ng_tcp_close(&p->tcp.f[i], &sh->tcp_budget);
		ng_tcp_close(&p->qtcp.f[i], &sh->tcp_budget);
	}
	/* Held query segments go with the socket: the kernel drops them. */
	ng_nfq_close(&p->q);
	ng_rawsend_close(&p->raw);
	ng_outq_free(&p->oq);
	ng_nl_close(&p->nl);
	if (sh->obs) {
		ng_observer_remove(sh->obs, &p->nodeseen);
		ng_podseen_free(sh->obs, &p->nodeseen);
	}
	ng_tracker_free(&p->tr);
	ng_tracker_free(&p->tr_node);
	ng_taught_free(&p->taught);
	ng_policy_free(&p->policy);
	ng_vec_free(&p->tables);
	ng_podref_free(&p->pod);
	free(p);
}

/* ---- committing ---------------------------------------------------------- */

/* The plan as the commit takes it: per learned set, every element, and
 * the refreshed ones among them. */
static int to_update(const ng_pending_vec *pend, struct ng_learned_update *u)
{
	for (size_t i = 0; i < pend->n; i++) {
		const struct ng_pending *q = &pend->v[i];
		int r = q->ranged ? 1 : 0, f = NG_FAM_IDX(q->e.lo.fam);

		if (ng_vec_push(&u->add[r][f], &q->e) < 0 ||
		    (q->refresh && ng_vec_push(&u->refresh[r][f], &q->e) < 0))
			return -1;
	}
	return 0;
}

/* One side's commit of `pend`; 0 when it had nothing to commit. */
static int commit_side(struct ng_pod *p, struct ng_nl *nl, bool in_node, const ng_pending_vec *pend,
		       struct ng_err *err)
{
	struct ng_learned_update u = {0};
	int rc;

	if (!pend || pend->n == 0)
		return 0;
	rc = to_update(pend, &u);
	if (rc < 0)
		ng_fail(err, NG_E_INTERNAL, "out of memory");
	else
		rc = ng_learned_commit_side(nl, in_node, &p->tables, p->sets, &u, err);
	ng_learned_update_free(&u);
	return rc;
}

int ng_pod_commit(struct ng_pod *p, struct ng_pod_shared *sh, const ng_pending_vec *pend,
		  const ng_pending_vec *pend_node)
{
	struct ng_err err = {0};
	int rc;

	if (pend->n == 0 && (!pend_node || pend_node->n == 0))
		return 0;
	/* The pod's side first, then the node's: both acknowledged before the
	 * verdict. A pod side that took its elements keeps them when the node
	 * side fails (they time out), and its tracker says so. */
	rc = commit_side(p, &p->nl, false, pend, &err);
	if (rc < 0)
		ng_tracker_revert(&p->tr, pend);
	else
		rc = commit_side(p, sh->node_nl, true, pend_node, &err);
	if (rc < 0) {
		p->c.commit_errors++;
		/* A pod with NET_ADMIN can make every commit fail (its table
		 * gone): the 1st, 2nd, 4th, ... (agent/alog.h). */
		if (ng_alog_due(p->c.commit_errors, 1))
			ng_pod_log("error", "commit_failed", p, "%s (%llu failed commits so far)", err.msg,
				   (unsigned long long)p->c.commit_errors);
		if (pend_node)
			ng_tracker_revert(&p->tr_node, pend_node);
		return -1;
	}
	p->c.commits++;
	p->c.learned += pend->n; /* counted on the pod's side */
	p->learned_gen++;
	return 0;
}

/* ---- the sweep ----------------------------------------------------------- */

/* The due elements of both sides (the pod's tracker, then the node
 * side's) as one job for the keep-alive thread: starting where the last
 * job stopped, as many as NG_KA_LOOKUPS distinct (address, protocol) and
 * NG_KA_ELEMS elements hold; the rest wait for the next sweeps
 * (counted). */
static void submit_keepalive(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_tracker_due *due,
			     const struct ng_tracker_due *due_node)
{
	uint32_t total = due->n + due_node->n, taken = 0;
	struct ng_ka_job *j;

	if (total == 0)
		return;
	j = ng_ka_job_new(p->key, p->nonce, &p->pod);
	if (!j) {
		ng_pod_log("error", "conntrack", p, "out of memory");
		return;
	}
	if (p->ka_next >= total)
		p->ka_next = 0;
	for (; taken < total && j->n < NG_KA_ELEMS; taken++) {
		uint32_t k = (p->ka_next + taken) % total;
		struct ng_elem e;
		bool ranged;

		if (k < due->n)
			ng_tracker_due_elem(&p->tr, due, k, &e, &ranged);
		else
			ng_tracker_due_elem(&p->tr_node, due_node, k - due->n, &e, &ranged);
		j->e[j->n] =
			(struct ng_ka_elem){.ip = e.lo, .proto = e.proto, .p_lo = e.p_lo, .p_hi = e.p_hi};
		if (ng_ka_lookups(j, j->n + 1) > NG_KA_LOOKUPS)
			break;
		j->n++;
	}
	p->ka_next = (p->ka_next + taken) % total;
	p->c.ka_deferred += total - taken;
	if (ng_ka_submit(sh->ka, j))
		p->ka_waiting = true;
	else
		p->c.ka_deferred += taken;
}

void ng_pod_sweep(struct ng_pod *p, struct ng_pod_shared *sh, int64_t now_ms)
{
	unsigned gone = ng_tracker_expire(&p->tr, now_ms);

	p->c.expired += gone;
	gone += ng_tracker_expire(&p->tr_node, now_ms); /* counted once, on the pod's side */
	if (gone) {
		ng_taught_prune(&p->taught, &p->tr, p->node_side ? &p->tr_node : NULL);
		p->learned_gen++;
	}
	ng_seen_expire(&p->nodeseen.seen, now_ms);
	/* One job in flight at most: a pod whose lookups are slow waits for
	 * its own, and never queues more. */
	if (sh->ka && !p->ka_waiting) {
		struct ng_tracker_due due, due_node;
		int n = ng_tracker_due(&p->tr, now_ms, KEEPALIVE_WINDOW_MS, &due);
		int nn = ng_tracker_due(&p->tr_node, now_ms, KEEPALIVE_WINDOW_MS, &due_node);

		if (n < 0 || nn < 0)
			ng_pod_log("error", "conntrack", p, "out of memory");
		else if (n > 0 || nn > 0)
			submit_keepalive(p, sh, &due, &due_node);
		ng_tracker_due_free(&due);
		ng_tracker_due_free(&due_node);
	}
	for (int i = 0; i < NG_TCP_FLOWS; i++)
		if (p->tcp.f[i].used && now_ms - p->tcp.f[i].last_ms > NG_TCP_IDLE_MS)
			ng_tcp_close(&p->tcp.f[i], &sh->tcp_budget);
	if (p->flow_skipped && p->flowq) {
		struct ng_flow_ev ev;

		ng_flowev_note(&ev, NG_FLOW_SKIPPED, p->pod.ns, p->pod.name, NG_LOG_POD, p->flow_skipped,
			       "over log.ratePerSecond: DNS queries the agent refused and did not log",
			       ng_wall_ms());
		if (ng_flowq_push(p->flowq, &ev))
			p->flow_skipped = 0;
	}
}

void ng_pod_kept_alive(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_ka_job *j)
{
	struct ng_tracker_due due, due_node;
	ng_pending_vec pend = {0}, pend_node = {0};
	int64_t now = ng_mono_ms();

	p->ka_waiting = false;
	p->c.ka_cut += j->cut;
	if (j->error[0])
		ng_pod_log("error", "conntrack", p, "%s", j->error);
	/* Due as of now, on each side: an element an answer refreshed
	 * meanwhile is not due any more, and is left alone. */
	if (ng_tracker_due(&p->tr, now, KEEPALIVE_WINDOW_MS, &due) < 0 ||
	    ng_tracker_due(&p->tr_node, now, KEEPALIVE_WINDOW_MS, &due_node) < 0) {
		ng_tracker_due_free(&due);
		ng_pod_log("error", "conntrack", p, "out of memory");
		return;
	}
	for (uint32_t i = 0; i < j->n; i++) {
		const struct ng_ka_elem *e = &j->e[i];

		if (!e->live)
			continue;
		p->c.kept_alive += ng_tracker_keepalive(&p->tr, &due, &e->ip, e->proto, e->port, &pend);
		p->c.kept_alive +=
			ng_tracker_keepalive(&p->tr_node, &due_node, &e->ip, e->proto, e->port, &pend_node);
	}
	ng_pod_commit(p, sh, &pend, &pend_node);
	ng_vec_free(&pend);
	ng_vec_free(&pend_node);
	ng_tracker_due_free(&due);
	ng_tracker_due_free(&due_node);
}
