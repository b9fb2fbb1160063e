/* What the node saw of a pod's DNS, and the node side's question about an
 * answer. See nodeseen.h. */
#include "agent/nodeseen.h"

#include <stdlib.h>
#include <string.h>

#include "policy/dnsquery.h"

static bool flow_eq(const struct ng_dns_flow *a, const struct ng_dns_flow *b)
{
	return a->proto == b->proto && a->pod_port == b->pod_port && a->server_port == b->server_port &&
	       ng_ip_eq(&a->pod, &b->pod) && ng_ip_eq(&a->server, &b->server);
}

static void drop_answer(struct ng_nodeseen *s, struct ng_seen_answer *a)
{
	s->held -= a->len;
	free(a->msg);
	memset(a, 0, sizeof(*a));
}

void ng_seen_expire(struct ng_nodeseen *s, int64_t now_ms)
{
	for (int i = 0; i < NG_SEEN_QUERIES; i++)
		if (s->q[i].used && now_ms - s->q[i].at_ms > NG_SEEN_QUERY_MS)
			s->q[i].used = false;
	for (int i = 0; i < NG_SEEN_ANSWERS; i++)
		if (s->a[i].used && now_ms - s->a[i].at_ms > NG_SEEN_ANSWER_MS)
			drop_answer(s, &s->a[i]);
}

bool ng_seen_query(struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		   int64_t now_ms)
{
	struct ng_dns_query dq;
	struct ng_seen_query *slot = NULL;

	if (ng_dns_query_parse(msg, len, &dq) != NG_DNSQ_OK)
		return false;
	ng_seen_expire(s, now_ms);
	s->c.queries++;
	for (int i = 0; i < NG_SEEN_QUERIES; i++) {
		struct ng_seen_query *q = &s->q[i];

		if (!q->used) {
			if (!slot || slot->used)
				slot = q;
		} else if (flow_eq(&q->fl, fl) && q->id == dq.id && q->qtype == dq.qtype &&
			   q->qclass == dq.qclass && !strcmp(q->name, dq.name)) {
			slot = q; /* a retransmission */
			break;
		} else if (!slot || (slot->used && q->at_ms < slot->at_ms)) {
			slot = q; /* the oldest, unless a free one turns up */
		}
	}
	if (slot->used && !(flow_eq(&slot->fl, fl) && slot->id == dq.id))
		s->c.evicted++;
	slot->used = true;
	slot->fl = *fl;
	slot->id = dq.id;
	slot->qtype = dq.qtype;
	slot->qclass = dq.qclass;
	slot->at_ms = now_ms;
	memcpy(slot->name, dq.name, sizeof(slot->name));
	return true;
}

/* The outstanding query `m` answers on flow fl, or NULL. */
static struct ng_seen_query *asked(struct ng_nodeseen *s, const struct ng_dns_flow *fl,
				   const struct ng_dns_msg *m)
{
	for (int i = 0; i < NG_SEEN_QUERIES; i++) {
		struct ng_seen_query *q = &s->q[i];

		if (q->used && flow_eq(&q->fl, fl) && q->id == m->id && q->qtype == m->qtype &&
		    q->qclass == m->qclass && !strcmp(q->name, m->names[0]))
			return q;
	}
	return NULL;
}

/* A free answer slot, making room for `len` more bytes (oldest first);
 * NULL when len alone is over the bound. */
static struct ng_seen_answer *room(struct ng_nodeseen *s, size_t len)
{
	if (len > NG_SEEN_BYTES)
		return NULL;
	for (;;) {
		struct ng_seen_answer *free_slot = NULL, *oldest = NULL;

		for (int i = 0; i < NG_SEEN_ANSWERS; i++) {
			struct ng_seen_answer *a = &s->a[i];

			if (!a->used && !free_slot)
				free_slot = a;
			else if (a->used && (!oldest || a->at_ms < oldest->at_ms))
				oldest = a;
		}
		if (free_slot && s->held + len <= NG_SEEN_BYTES)
			return free_slot;
		s->c.evicted++;
		drop_answer(s, oldest);
	}
}

bool ng_seen_answer(struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		    int64_t now_ms, struct ng_dns_msg *scratch)
{
	struct ng_seen_query *q;
	struct ng_seen_answer *a;
	uint8_t *copy;

	ng_seen_expire(s, now_ms);
	/* Its question must be whole: the parser that teaches reads it. */
	if (len < 12 || !(msg[2] & 0x80) || ng_dns_parse(msg, len, scratch) < 0 ||
	    !(q = asked(s, fl, scratch))) {
		s->c.unmatched++;
		return false;
	}
	q->used = false; /* answered: a second answer to it matches nothing */
	s->c.matched++;
	a = room(s, len);
	copy = a ? malloc(len ? len : 1) : NULL;
	if (!copy) {
		s->c.evicted++;
		return false;
	}
	memcpy(copy, msg, len);
	*a = (struct ng_seen_answer){.used = true, .fl = *fl, .at_ms = now_ms, .msg = copy, .len = len};
	s->held += len;
	return true;
}

bool ng_seen_vouch(const struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		   int64_t now_ms)
{
	for (int i = 0; i < NG_SEEN_ANSWERS; i++) {
		const struct ng_seen_answer *a = &s->a[i];

		if (a->used && now_ms - a->at_ms <= NG_SEEN_ANSWER_MS && a->len == len &&
		    flow_eq(&a->fl, fl) && !memcmp(a->msg, msg, len))
			return true;
	}
	return false;
}

size_t ng_seen_held(const struct ng_nodeseen *s)
{
	return s->held;
}

void ng_seen_free(struct ng_nodeseen *s)
{
	for (int i = 0; i < NG_SEEN_ANSWERS; i++)
		if (s->a[i].used)
			drop_answer(s, &s->a[i]);
	memset(s, 0, sizeof(*s));
}
