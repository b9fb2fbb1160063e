/* The node-side observer: NFLOG copies from the host peers, fed to each
 * pod's observation. See observer.h. */
#include "agent/observer.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "policy/config.h"

#define ETH_HDR      14
#define OBS_RCVBUF   (8 * 1024 * 1024)
#define OBS_MAX_READ 4096 /* copies one drain reads at most: a flood cannot stall the loop */

int ng_observer_init(struct ng_observer *o)
{
	memset(o, 0, sizeof(*o));
	o->log.nl.fd = -1;
	o->scratch = malloc(sizeof(*o->scratch));
	return o->scratch ? 0 : -1;
}

int ng_observer_open(struct ng_observer *o, struct ng_err *err)
{
	if (ng_observer_init(o) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	if (ng_nflog_open(-1, &o->log, err) < 0)
		return -1;
	ng_nl_rcvbuf(&o->log.nl, OBS_RCVBUF);
	if (ng_nflog_bind(&o->log, NG_OBSERVE_GROUP, 0xffff, err) < 0) {
		ng_nflog_close(&o->log);
		return -1;
	}
	o->open = true;
	return 0;
}

int ng_observer_fd(const struct ng_observer *o)
{
	return o->open ? o->log.nl.fd : -1;
}

void ng_observer_close(struct ng_observer *o)
{
	if (o->open)
		ng_nflog_close(&o->log);
	o->open = false;
	ng_vec_free(&o->pods);
	free(o->scratch);
	o->scratch = NULL;
}

int ng_observer_add(struct ng_observer *o, struct ng_podseen *ps)
{
	return ng_vec_push(&o->pods, &ps); // NOLINT(bugprone-sizeof-expression)
}

void ng_observer_remove(struct ng_observer *o, struct ng_podseen *ps)
{
	for (size_t i = 0; i < o->pods.n; i++)
		if (o->pods.v[i] == ps) {
			o->pods.v[i] = o->pods.v[--o->pods.n];
			return;
		}
}

void ng_podseen_free(struct ng_observer *o, struct ng_podseen *ps)
{
	for (int i = 0; i < NG_TCP_FLOWS; i++) {
		ng_tcp_close(&ps->tq.f[i], &o->tcp_budget);
		ng_tcp_close(&ps->ta.f[i], &o->tcp_budget);
	}
	ng_seen_free(&ps->seen);
}

static struct ng_podseen *find(const struct ng_observer *o, uint32_t ifindex)
{
	for (size_t i = 0; i < o->pods.n; i++)
		if (o->pods.v[i]->host_ifindex == ifindex)
			return o->pods.v[i];
	return NULL;
}

/* The exchange's flow, named from the pod's side. */
static struct ng_dns_flow flow_of(const struct ng_pkt *k, bool to_pod)
{
	struct ng_dns_flow fl = {.proto = k->proto};

	fl.pod = to_pod ? k->dst : k->src;
	fl.server = to_pod ? k->src : k->dst;
	fl.pod_port = to_pod ? k->dport : k->sport;
	fl.server_port = to_pod ? k->sport : k->dport;
	return fl;
}

struct msg_ctx {
	struct ng_observer *o;
	struct ng_podseen *ps;
	struct ng_dns_flow fl;
	bool to_pod;
	int64_t now;
};

static void one_message(const uint8_t *msg, size_t len, void *data)
{
	struct msg_ctx *c = data;

	if (c->to_pod)
		ng_seen_answer(&c->ps->seen, &c->fl, msg, len, c->now, c->o->scratch);
	else
		ng_seen_query(&c->ps->seen, &c->fl, msg, len, c->now);
}

/* A TCP segment of a DNS stream: in order into its flow, every message it
 * completes to the observation. */
static void tcp_segment(struct msg_ctx *c, const struct ng_pkt *k)
{
	struct ng_tcpflows *fs = c->to_pod ? &c->ps->ta : &c->ps->tq;
	struct ng_tcpflow *f = ng_tcp_flow(fs, k, c->now);

	if (!f)
		return;
	if (ng_tcp_segment(f, k, &c->o->tcp_budget, one_message, c) >= 0)
		ng_tcp_done(f, true, &c->o->tcp_budget);
	if ((k->tcp_flags & NG_TCP_RST) ||
	    ((k->tcp_flags & NG_TCP_FIN) && k->seq + (uint32_t)k->payload_len == f->next))
		ng_tcp_close(f, &c->o->tcp_budget);
}

void ng_observer_record(struct ng_observer *o, const struct ng_nflog_record *r, int64_t now_ms)
{
	/* An answer is copied on the peer's egress (out: the peer, in: none),
	 * from its Ethernet header; a query on its ingress, from the IP header. */
	bool to_pod = r->outdev && !r->indev;
	struct ng_podseen *ps;
	const uint8_t *at = r->payload;
	size_t len = r->len;
	struct ng_pkt k;

	o->records++;
	if (!o->scratch || r->group != NG_OBSERVE_GROUP || !at || (!r->outdev == !r->indev))
		return;
	ps = find(o, to_pod ? r->outdev : r->indev);
	if (!ps) {
		o->foreign++;
		return;
	}
	if (to_pod) {
		if (len < ETH_HDR ||
		    !((at[12] == 0x08 && at[13] == 0x00) || (at[12] == 0x86 && at[13] == 0xdd)))
			return; /* VLAN tags and the like: nothing vouched */
		at += ETH_HDR;
		len -= ETH_HDR;
	}
	/* A truncated copy disagrees with its own lengths: dropped here. */
	if (ng_pkt_parse(at, len, &k) < 0 || (to_pod ? k.sport : k.dport) != 53)
		return;
	struct msg_ctx c = {o, ps, flow_of(&k, to_pod), to_pod, now_ms};

	if (k.proto == 17)
		one_message(k.payload, k.payload_len, &c);
	else
		tcp_segment(&c, &k);
}

struct drain_ctx {
	struct ng_observer *o;
	int64_t now;
};

static void drain_one(const struct ng_nflog_record *r, void *data)
{
	struct drain_ctx *c = data;

	ng_observer_record(c->o, r, c->now);
}

int ng_observer_drain(struct ng_observer *o)
{
	struct drain_ctx c = {o, ng_mono_ms()};
	struct ng_err err = {0};

	if (!o->open)
		return 0;
	return ng_nflog_read(&o->log, 0, OBS_MAX_READ, drain_one, &c, &err);
}

uint64_t ng_observer_lost(const struct ng_observer *o)
{
	return o->log.lost;
}

bool ng_observer_vouch(struct ng_observer *o, struct ng_podseen *ps, const struct ng_pkt *k,
		       const uint8_t *msg, size_t len)
{
	struct ng_dns_flow fl = flow_of(k, true);

	if (!o || !o->scratch || !ps)
		return false;
	if (ng_seen_vouch(&ps->seen, &fl, msg, len, ng_mono_ms()))
		return true;
	ng_observer_drain(o);
	return ng_seen_vouch(&ps->seen, &fl, msg, len, ng_mono_ms());
}
