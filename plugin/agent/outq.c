#include "agent/outq.h"

#include <stdlib.h>
#include <string.h>

#define HDR 12

int ng_outq_key_of(const uint8_t *msg, size_t len, const struct ng_ip *resolver, uint8_t proto, uint16_t port,
		   struct ng_outq_key *k)
{
	size_t off = HDR, n = 0;

	memset(k, 0, sizeof(*k));
	if (!msg || len < HDR || msg[4] != 0 || msg[5] != 1)
		return -1; /* not exactly one question */
	for (;;) {
		uint8_t l;

		if (off >= len)
			return -1;
		l = msg[off];
		if (l > 63 || off + 1 + l > len || n + 1 + l > 255)
			return -1; /* a pointer, a reserved label type, or too long */
		off += 1 + (size_t)l;
		n += 1 + (size_t)l;
		if (l == 0)
			break;
	}
	if (off + 4 > len)
		return -1;
	n += 4;
	memcpy(k->q, msg + HDR, n);
	for (size_t i = 0; i < n - 4; i++)
		if (k->q[i] >= 'A' && k->q[i] <= 'Z')
			k->q[i] = (uint8_t)(k->q[i] - 'A' + 'a');
	k->qlen = (uint16_t)n;
	k->id = (uint16_t)(msg[0] << 8 | msg[1]);
	k->resolver = *resolver;
	k->proto = proto;
	k->port = port;
	return 0;
}

/* Label lengths are bytes below 64, never letters: lowercasing the whole
 * name in wire form changes only the letters. */
static bool same(const struct ng_outq_key *a, const struct ng_outq_key *b)
{
	return a->id == b->id && a->port == b->port && a->proto == b->proto && a->qlen == b->qlen &&
	       ng_ip_eq(&a->resolver, &b->resolver) && !memcmp(a->q, b->q, a->qlen);
}

static void drop(struct ng_outq *q, struct ng_outq_slot *s)
{
	s->used = false;
	q->n--;
}

int ng_outq_add(struct ng_outq *q, const struct ng_outq_key *k, int64_t now_ms)
{
	struct ng_outq_slot *free_slot = NULL, *oldest = NULL;
	int rc = 0;

	if (!q->v && !(q->v = calloc(NG_OUTQ_MAX, sizeof(*q->v))))
		return -1;
	for (unsigned i = 0; i < NG_OUTQ_MAX; i++) {
		struct ng_outq_slot *s = &q->v[i];

		if (!s->used) {
			if (!free_slot)
				free_slot = s;
			continue;
		}
		if (same(&s->k, k)) {
			s->at_ms = now_ms;
			return 0;
		}
		if (!oldest || s->at_ms < oldest->at_ms)
			oldest = s;
	}
	if (!free_slot) {
		free_slot = oldest;
		drop(q, oldest);
		rc = 1;
	}
	free_slot->used = true;
	free_slot->at_ms = now_ms;
	free_slot->k = *k;
	q->n++;
	return rc;
}

bool ng_outq_take(struct ng_outq *q, const struct ng_outq_key *k, int64_t now_ms)
{
	for (unsigned i = 0; q->v && q->n && i < NG_OUTQ_MAX; i++) {
		struct ng_outq_slot *s = &q->v[i];

		if (!s->used || !same(&s->k, k))
			continue;
		drop(q, s);
		return now_ms - s->at_ms <= NG_OUTQ_TTL_MS;
	}
	return false;
}

unsigned ng_outq_expire(struct ng_outq *q, int64_t now_ms)
{
	unsigned n = 0;

	for (unsigned i = 0; q->v && q->n && i < NG_OUTQ_MAX; i++)
		if (q->v[i].used && now_ms - q->v[i].at_ms > NG_OUTQ_TTL_MS) {
			drop(q, &q->v[i]);
			n++;
		}
	return n;
}

void ng_outq_free(struct ng_outq *q)
{
	free(q->v);
	memset(q, 0, sizeof(*q));
}
