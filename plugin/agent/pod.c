/* One pod in the agent: picked up from its state record, served, swept,
 * released. See agent.h. */
#include "agent/agent.h"
#include "base/clock.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/packet.h"
#include "spec/prevresult.h"
#include "kernel/ctdump.h"
#include "kernel/learnedset.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "kernel/ruleset.h"
#include "state/ready.h"
#include "state/recpolicy.h"
#include "nft/render.h"
#include "policy/config.h"

/* Live connections keep an address when it would expire within this. */
#define KEEPALIVE_WINDOW_MS 15000

struct ng_pod *ng_pod_find(struct ng_agent *a, const char *key)
{
	for (size_t i = 0; i < a->pods.n; i++)
		if (!strcmp(a->pods.v[i]->key, key))
			return a->pods.v[i];
	return NULL;
}

/* ---- picking a pod up ---------------------------------------------------- */

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

struct dump_ctx {
	struct ng_pod *p;
	const struct ng_set_spec *spec;
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
		ng_tracker_learned(&c->p->tr, &e, c->ranged, c->now + (int64_t)left - 1000);
}

/* After a restart: what the kernel still holds is what was learned. Read
 * from the pod's node-side table when it has one: a process in the pod
 * with NET_ADMIN can add to the pod's own sets, and what the tracker holds
 * is kept alive (re-added, on both sides) while connections use it. */
static void reread_learned(struct ng_agent *a, struct ng_pod *p)
{
	struct ng_err err = {0};
	struct ng_nl *nl = &p->nl;
	const char *table = NG_TABLE;
	uint8_t family = NFPROTO_INET;

	for (size_t i = 0; i < p->tables.n; i++)
		if (p->tables.v[i].in_node && a->node_nl_open) {
			nl = &a->node_nl;
			table = p->tables.v[i].name;
			family = p->tables.v[i].family;
		}
	for (int f = 0; f < 2; f++)
		for (int ranged = 0; ranged < 2; ranged++) {
			struct dump_ctx c = {p, &p->sets[(ranged ? NG_S_TTL4 : NG_S_NAMES4) + f], ranged != 0,
					     ng_mono_ms()};

			ng_learned_each(nl, family, table, c.spec, learned_one, &c, &err);
		}
}

static void free_pod(struct ng_agent *a, struct ng_pod *p)
{
	for (int i = 0; i < NG_TCP_FLOWS; i++)
		ng_tcp_close(&p->tcp.f[i], &a->tcp_budget);
	ng_nfq_close(&p->q);
	ng_nl_close(&p->nl);
	ng_tracker_free(&p->tr);
	ng_policy_free(&p->policy);
	ng_vec_free(&p->tables);
	ng_podref_free(&p->pod);
	free(p);
}

static int open_pod(struct ng_pod *p, struct ng_err *err)
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
	close(fd);
	return rc;
}

/* A record the learner serves: a pod whose names it learns, being added
 * or enforced. */
static bool learns(const struct ng_record *r)
{
	return r->learn && !r->refused_file &&
	       (!strcmp(r->decision, "pending") || !strcmp(r->decision, "enforced"));
}

int ng_pod_load(struct ng_agent *a, const char *name)
{
	char path[4500], key[256];
	struct ng_record r;
	struct ng_err err = {0};
	struct ng_pod *p, *old;
	bool refused;
	struct stat st;
	int64_t t0 = ng_mono_us();

	if (!ng_record_name(name, key, sizeof(key), &refused) || refused)
		return 0; /* a temp file of an ongoing write, a refusal, or not ours */
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s", a->state_dir, name);
	if (ng_record_read(path, &r, &err) < 0) {
		if (access(path, F_OK) == 0)
			ng_alog("error", "record_unusable", NULL, "%s", err.msg);
		return -1;
	}
	if (stat(path, &st) < 0)
		st.st_ino = 0;
	old = ng_pod_find(a, r.key);
	if (!learns(&r)) {
		if (old)
			ng_pod_release(a, old, "its record no longer asks for learning");
		ng_record_free(&r);
		return 0;
	}
	if (old && !strcmp(old->nonce, r.nonce)) {
		/* The same ADD's final record ("pending" to "enforced"). */
		old->seen = true;
		old->rec_ino = (uint64_t)st.st_ino;
		ng_record_free(&r);
		return 0;
	}
	if (old) /* a retried ADD: the new record wins */
		ng_pod_release(a, old, "record replaced");
	p = calloc(1, sizeof(*p));
	if (!p) {
		ng_record_free(&r);
		return -1;
	}
	p->ev = NG_EV_NFQ;
	p->q.fd = p->nl.fd = -1;
	p->seen = true;
	snprintf(p->key, sizeof(p->key), "%s", r.key);
	snprintf(p->nonce, sizeof(p->nonce), "%s", r.nonce);
	p->ifindex = r.have_link ? (uint32_t)r.link.ifindex : 0;
	p->rec_ino = (uint64_t)st.st_ino;
	p->tables = r.tables;
	memset(&r.tables, 0, sizeof(r.tables));
	if (rebuild_policy(&r, &p->policy, &err) == 0) {
		p->pod = r.pod; /* handed over */
		memset(&r.pod, 0, sizeof(r.pod));
	}
	if (!p->pod.container_id[0] || open_pod(p, &err) < 0) {
		ng_alog("error", "pod_unusable", NULL, "%s: %s", r.key,
			err.msg[0] ? err.msg : "out of memory");
		ng_record_free(&r);
		free_pod(a, p);
		return -1;
	}
	ng_record_free(&r);
	ng_render_set_specs(&p->policy, p->sets);
	reread_learned(a, p);

	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	/* the vector holds pointers: &p is the element to copy */
	if (epoll_ctl(a->epfd, EPOLL_CTL_ADD, p->q.fd, &ev) < 0 ||
	    ng_vec_push(&a->pods, &p) < 0) { // NOLINT(bugprone-sizeof-expression)
		ng_alog("error", "pod_unusable", p, "cannot watch its queue: %s", strerror(errno));
		free_pod(a, p);
		return -1;
	}
	if (ng_record_set_ready(a->state_dir, p->key, p->nonce, &err) < 0)
		ng_alog("error", "ready_write", p, "%s", err.msg);
	ng_alog("info", "pod_added", p,
		"serving %zu name entries, %u addresses still learned, picked up in %lld us",
		p->policy.name_entries.n, p->tr.n, (long long)(ng_mono_us() - t0));
	return 0;
}

static void add_counters(struct ng_counters *to, const struct ng_counters *c)
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
}

void ng_pod_release(struct ng_agent *a, struct ng_pod *p, const char *why)
{
	for (size_t i = 0; i < a->pods.n; i++)
		if (a->pods.v[i] == p) {
			a->pods.v[i] = a->pods.v[--a->pods.n];
			break;
		}
	if (p->q.fd >= 0)
		epoll_ctl(a->epfd, EPOLL_CTL_DEL, p->q.fd, NULL);
	ng_alog("info", "pod_released", p, "%s", why);
	add_counters(&a->c, &p->c);
	/* The sockets go before the ready file: DEL waits for that file. */
	ng_nfq_close(&p->q);
	ng_nl_close(&p->nl);
	ng_record_clear_ready(a->state_dir, p->key);
	free_pod(a, p);
}

/* ---- answers ------------------------------------------------------------- */

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

struct msg_ctx {
	struct ng_agent *a;
	struct ng_pod *p;
	int rc;
};

/* One DNS message: parsed, matched, planned into a->pending. */
static void take_message(const uint8_t *msg, size_t len, void *data)
{
	struct msg_ctx *c = data;
	struct ng_pod *p = c->p;
	unsigned full = 0;

	p->c.answers++;
	if (ng_dns_parse(msg, len, c->a->msg) < 0) {
		p->c.unparsed++;
		return; /* teaches nothing, passes unchanged */
	}
	if (ng_learn(&p->policy, c->a->msg, &c->a->lr) < 0 ||
	    ng_tracker_plan(&p->tr, &c->a->lr, ng_mono_ms(), &c->a->pending, &full) < 0) {
		c->rc = -1;
		return;
	}
	if (full) {
		p->c.full += full;
		ng_alog("warning", "tracker_full", p,
			"%u element(s) of the answer for %s not learned: %u tracked", full,
			c->a->msg->names[0], p->tr.n);
	}
	if (c->a->lr.metadata) {
		p->c.metadata += c->a->lr.metadata;
		ng_alog("warning", "metadata_refused", p,
			"the answer for %s names %u metadata address(es): not learned", c->a->msg->names[0],
			c->a->lr.metadata);
	}
}

/* Commits what the answer's messages planned; false when they could not
 * be planned or committed (the tracker then forgets the plan: it must
 * never claim an element the kernel does not hold). */
static bool commit_planned(struct ng_agent *a, struct ng_pod *p, const struct msg_ctx *c)
{
	if (c->rc < 0) {
		ng_tracker_revert(&p->tr, &a->pending);
		return false;
	}
	return ng_pod_commit(a, p) == 0;
}

static uint32_t tcp_verdict(struct ng_agent *a, struct ng_pod *p, const struct ng_pkt *k, struct msg_ctx *c)
{
	struct ng_tcpflow *f = ng_tcp_flow(&p->tcp, k, ng_mono_ms());
	uint32_t v = NF_ACCEPT;
	int n;

	if (!f)
		return k->payload_len || (k->tcp_flags & NG_TCP_SYN) ? NF_DROP : NF_ACCEPT;
	n = ng_tcp_segment(f, k, &a->tcp_budget, take_message, c);
	if (n < 0 || (n > 0 && !commit_planned(a, p, c)))
		v = NF_DROP; /* a gap or a bound; or the commit did not happen */
	if (n >= 0)
		ng_tcp_done(f, v == NF_ACCEPT, &a->tcp_budget);
	/* A FIN ends the flow only in order (after every byte before it): one
	 * past a dropped segment would leave that segment's retransmission
	 * with no flow to land in. */
	if (v == NF_ACCEPT && ((k->tcp_flags & NG_TCP_RST) ||
			       ((k->tcp_flags & NG_TCP_FIN) && k->seq + (uint32_t)k->payload_len == f->next)))
		ng_tcp_close(f, &a->tcp_budget);
	return v;
}

static void one_packet(const struct ng_nfq_packet *pk, void *data)
{
	struct msg_ctx *c = data;
	struct ng_agent *a = c->a;
	struct ng_pod *p = c->p;
	struct ng_pkt k;
	uint32_t v = NF_ACCEPT;

	a->pending.n = 0;
	c->rc = 0;
	/* Dropped: a packet not from our dns_answers chain (input, the pod's
	 * interface: a queue rule of the pod's own, with NET_ADMIN, would hand
	 * us packets it wrote itself, over loopback or any hook), or one we
	 * cannot read. */
	if (pk->hook != NF_INET_LOCAL_IN || pk->indev != p->ifindex) {
		v = NF_DROP;
		/* Someone else's queue rule: worth an operator's eye (logged at
		 * the 1st, 2nd, 4th, 8th, ... so a flood cannot flood the log). */
		p->c.foreign++;
		if (!(p->c.foreign & (p->c.foreign - 1)))
			ng_alog("warning", "queue_foreign", p,
				"%llu packet(s) not queued by the agent's chain (this one: hook %u, in on "
				"ifindex %u, the pod's %s is %u): dropped; does the pod hold NET_ADMIN?",
				(unsigned long long)p->c.foreign, pk->hook, pk->indev, p->pod.ifname,
				p->ifindex);
	} else if (ng_pkt_parse(pk->data, pk->len, &k) < 0) {
		v = NF_DROP;
	} else if (!from_resolver(p, &k)) {
		v = NF_ACCEPT; /* the rule queues only resolvers' port 53: nothing to learn */
	} else if (k.proto == 17) {
		take_message(k.payload, k.payload_len, c);
		if (!commit_planned(a, p, c))
			v = NF_DROP;
	} else {
		v = tcp_verdict(a, p, &k, c);
	}
	if (v == NF_DROP)
		p->c.dropped++;
	/* Only now, after every table acknowledged: the verdict. */
	ng_nfq_verdict(&p->q, pk->id, v);
}

void ng_pod_serve(struct ng_agent *a, struct ng_pod *p)
{
	struct msg_ctx c = {a, p, 0};

	/* 64 at a time: one pod's flood of answers (each costing a commit)
	 * must not keep the others' waiting (the epoll is level-triggered). */
	if (ng_nfq_read(&p->q, a->rx, 65536 + 4096, 64, one_packet, &c) < 0)
		ng_alog("error", "queue_read", p, "%s", strerror(errno));
}

/* ---- the sweep ----------------------------------------------------------- */

struct keep_ctx {
	struct ng_agent *a;
	struct ng_pod *p;
	int64_t now;
	uint32_t *due, n_due; /* the slots about to expire */
};

/* A live flow: refresh its address's elements that are about to expire.
 * Only those are looked at: the pod chooses how many flows conntrack
 * lists, and each one must not cost a walk of the whole tracker. */
static void keep_flow(const struct ng_ip *dst, uint8_t proto, uint16_t dport, void *data)
{
	struct keep_ctx *c = data;
	struct ng_tracker *t = &c->p->tr;

	for (uint32_t i = 0; i < c->n_due; i++) {
		struct ng_track *s = &t->slot[c->due[i]];

		if (!s->used || s->proto != proto || dport < s->p_lo || dport > s->p_hi ||
		    !ng_ip_eq(&s->ip, dst) || s->expires - c->now > KEEPALIVE_WINDOW_MS)
			continue;
		if (ng_tracker_plan_one(t, s, s->lifetime, c->now, &c->a->pending) == 0)
			c->p->c.kept_alive++;
	}
}

void ng_pod_sweep(struct ng_agent *a, struct ng_pod *p, int64_t now_ms)
{
	bool soon = false;

	/* The namespace's path gone or reused: the pod is gone (DEL may never
	 * come, or came while we were down). */
	if (!ng_netns_still_pods(&p->pod)) {
		ng_pod_release(a, p, "its network namespace is gone");
		return;
	}
	p->c.expired += ng_tracker_expire(&p->tr, now_ms);
	for (uint32_t i = 0; i < p->tr.cap && !soon; i++)
		soon = p->tr.slot[i].used && p->tr.slot[i].expires - now_ms <= KEEPALIVE_WINDOW_MS;
	if (soon) {
		struct keep_ctx c = {a, p, now_ms, malloc(p->tr.cap * sizeof(uint32_t)), 0};
		struct ng_err err = {0};

		for (uint32_t i = 0; c.due && i < p->tr.cap; i++)
			if (p->tr.slot[i].used && p->tr.slot[i].expires - now_ms <= KEEPALIVE_WINDOW_MS)
				c.due[c.n_due++] = i;
		a->pending.n = 0;
		if (!c.due)
			ng_alog("error", "conntrack", p, "out of memory");
		else if (ng_ct_flows(&p->nl, keep_flow, &c, &err) < 0)
			ng_alog("error", "conntrack", p, "%s", err.msg);
		free(c.due);
		ng_pod_commit(a, p);
	}
	for (int i = 0; i < NG_TCP_FLOWS; i++)
		if (p->tcp.f[i].used && now_ms - p->tcp.f[i].last_ms > NG_TCP_IDLE_MS)
			ng_tcp_close(&p->tcp.f[i], &a->tcp_budget);
}

void ng_pod_relearn(struct ng_agent *a, struct ng_pod *p)
{
	int64_t now = ng_mono_ms();

	a->pending.n = 0;
	for (uint32_t i = 0; i < p->tr.cap; i++)
		if (p->tr.slot[i].used && p->tr.slot[i].expires > now) {
			/* The same expiry as before the repair, not a new lease. */
			int64_t left = (p->tr.slot[i].expires - now) / 1000;

			ng_tracker_plan_one(&p->tr, &p->tr.slot[i], (uint32_t)(left > 0 ? left : 1), now,
					    &a->pending);
		}
	if (ng_pod_commit(a, p) == 0)
		ng_alog("info", "relearned", p, "%zu learned element(s) committed again after a repair",
			a->pending.n);
}
