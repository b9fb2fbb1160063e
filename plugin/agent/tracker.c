#include "agent/tracker.h"

#include <stdlib.h>
#include <string.h>

struct ng_track {
	struct ng_ip ip;
	uint8_t proto;
	bool ranged; /* names_vX_ranges, else names_vX */
	bool used;
	bool kept; /* its lease was last renewed by a live connection (keep-alive) */
	uint16_t p_lo, p_hi;
	uint32_t lifetime; /* s, the lease the element was last learned for */
	int64_t expires;   /* ms, CLOCK_MONOTONIC */
};

static uint32_t hash(const struct ng_ip *ip, uint8_t proto, bool ranged, uint16_t lo, uint16_t hi)
{
	uint32_t h = 2166136261u;
	uint8_t b[24];
	size_t n = (size_t)ng_ip_len(ip->fam);

	memcpy(b, ip->a, n);
	b[n++] = proto;
	b[n++] = ranged;
	b[n++] = (uint8_t)(lo >> 8);
	b[n++] = (uint8_t)lo;
	b[n++] = (uint8_t)(hi >> 8);
	b[n++] = (uint8_t)hi;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static bool same(const struct ng_track *s, const struct ng_elem *e, bool ranged)
{
	return s->used && s->ranged == ranged && s->proto == e->proto && s->p_lo == e->p_lo &&
	       s->p_hi == e->p_hi && ng_ip_eq(&s->ip, &e->lo);
}

/* The slot holding e, or t->cap when none does. */
static uint32_t slot_of(const struct ng_tracker *t, const struct ng_elem *e, bool ranged)
{
	if (!t->cap)
		return 0;
	for (uint32_t i = hash(&e->lo, e->proto, ranged, e->p_lo, e->p_hi) & (t->cap - 1);;
	     i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i].used)
			return t->cap;
		if (same(&t->slot[i], e, ranged))
			return i;
	}
}

static struct ng_track *find(const struct ng_tracker *t, const struct ng_elem *e, bool ranged)
{
	uint32_t i = slot_of(t, e, ranged);

	return i < t->cap ? &t->slot[i] : NULL;
}

static int grow(struct ng_tracker *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 16;
	struct ng_track *old = t->slot, *s = calloc(cap, sizeof(*s));

	if (!s)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct ng_track *o = &old[i];
		uint32_t j;

		if (!o->used)
			continue;
		for (j = hash(&o->ip, o->proto, o->ranged, o->p_lo, o->p_hi) & (cap - 1); s[j].used;
		     j = (j + 1) & (cap - 1)) {
		}
		s[j] = *o;
	}
	free(old);
	t->slot = s;
	t->cap = cap;
	return 0;
}

static struct ng_track *insert(struct ng_tracker *t, const struct ng_elem *e, bool ranged)
{
	uint32_t i;

	if (t->n >= NG_TRACK_MAX || ((t->n + 1) * 2 > t->cap && grow(t) < 0))
		return NULL;
	for (i = hash(&e->lo, e->proto, ranged, e->p_lo, e->p_hi) & (t->cap - 1); t->slot[i].used;
	     i = (i + 1) & (t->cap - 1)) {
	}
	t->slot[i] = (struct ng_track){.ip = e->lo,
				       .proto = e->proto,
				       .ranged = ranged,
				       .used = true,
				       .p_lo = e->p_lo,
				       .p_hi = e->p_hi};
	t->n++;
	return &t->slot[i];
}

/* Linear probing's deletion: shift the following run back over the hole. */
static void erase(struct ng_tracker *t, struct ng_track *s)
{
	uint32_t i = (uint32_t)(s - t->slot), j = i;

	t->slot[i].used = false;
	t->n--;
	for (;;) {
		uint32_t k;

		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j].used)
			return;
		k = hash(&t->slot[j].ip, t->slot[j].proto, t->slot[j].ranged, t->slot[j].p_lo,
			 t->slot[j].p_hi) &
		    (t->cap - 1);
		/* Move j to i when its home k is not cyclically in (i, j]. */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slot[i] = t->slot[j];
		t->slot[j].used = false;
		i = j;
	}
}

static int pend(ng_pending_vec *out, struct ng_track *s, const struct ng_elem *e, uint32_t life, int64_t now,
		bool fresh)
{
	struct ng_pending p = {.e = *e,
			       .ranged = s->ranged,
			       .refresh = !fresh,
			       .old_expires = fresh ? 0 : s->expires,
			       .old_lifetime = s->lifetime};

	p.e.timeout = life;
	p.old_kept = s->kept;
	if (ng_vec_push(out, &p) < 0)
		return -1;
	s->expires = now + (int64_t)life * 1000;
	s->lifetime = life;
	s->kept = false;
	return 0;
}

/* A refresh of tracked element `s` for `life` seconds from now. */
static int pend_again(ng_pending_vec *out, struct ng_track *s, uint32_t life, int64_t now)
{
	struct ng_elem e = {.lo = s->ip, .hi = s->ip, .proto = s->proto, .p_lo = s->p_lo, .p_hi = s->p_hi};

	return pend(out, s, &e, life, now, false);
}

int ng_tracker_plan(struct ng_tracker *t, const struct ng_learn_result *r, int64_t now_ms,
		    ng_pending_vec *out, unsigned *full)
{
	for (int f = 0; f < 2; f++) {
		for (int ranged = 0; ranged < 2; ranged++) {
			const ng_elem_vec *v = ranged ? &r->ranges[f] : &r->single[f];

			for (size_t i = 0; i < v->n; i++) {
				const struct ng_elem *e = &v->v[i];
				int64_t want = now_ms + (int64_t)e->timeout * 1000;
				int64_t slack = (int64_t)e->timeout * 100;
				struct ng_track *s = find(t, e, ranged);

				if (slack > 60000)
					slack = 60000;
				if (!s) {
					s = insert(t, e, ranged);
					if (!s) {
						(*full)++;
						continue;
					}
					if (pend(out, s, e, e->timeout, now_ms, true) < 0)
						return -1;
					continue;
				}
				/* Never shorter; a refresh only when it moves the
				 * expiry by more than the slack. */
				if (want <= s->expires + slack && s->expires > now_ms)
					continue;
				if (pend(out, s, e, e->timeout, now_ms, false) < 0)
					return -1;
			}
		}
	}
	return 0;
}

int ng_tracker_relearn(struct ng_tracker *t, int64_t now_ms, ng_pending_vec *out)
{
	int n = 0;

	for (uint32_t i = 0; i < t->cap; i++) {
		struct ng_track *s = &t->slot[i];
		int64_t left = (s->expires - now_ms) / 1000;
		uint32_t lease = s->lifetime;

		if (!s->used || s->expires <= now_ms)
			continue;
		/* The kernel is sent what is left; the tracker keeps the lease,
		 * which a live connection renews in full. */
		bool kept = s->kept;

		if (pend_again(out, s, (uint32_t)(left > 0 ? left : 1), now_ms) < 0)
			return -1;
		s->lifetime = lease;
		s->kept = kept;
		n++;
	}
	return n;
}

int ng_tracker_due(const struct ng_tracker *t, int64_t now_ms, int64_t window_ms, struct ng_tracker_due *d)
{
	uint32_t n = 0;

	*d = (struct ng_tracker_due){.now_ms = now_ms, .window_ms = window_ms};
	for (uint32_t i = 0; i < t->cap; i++)
		n += t->slot[i].used && t->slot[i].expires - now_ms <= window_ms;
	if (n == 0)
		return 0;
	d->at = malloc(n * sizeof(*d->at));
	if (!d->at)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->slot[i].used && t->slot[i].expires - now_ms <= window_ms)
			d->at[d->n++] = i;
	return (int)d->n;
}

void ng_tracker_due_free(struct ng_tracker_due *d)
{
	free(d->at);
	memset(d, 0, sizeof(*d));
}

void ng_tracker_due_elem(const struct ng_tracker *t, const struct ng_tracker_due *d, uint32_t i,
			 struct ng_elem *e, bool *ranged)
{
	const struct ng_track *s = &t->slot[d->at[i]];

	*e = (struct ng_elem){.lo = s->ip, .hi = s->ip, .proto = s->proto, .p_lo = s->p_lo, .p_hi = s->p_hi};
	*ranged = s->ranged;
}

unsigned ng_tracker_keepalive(struct ng_tracker *t, const struct ng_tracker_due *d, const struct ng_ip *dst,
			      uint8_t proto, uint16_t dport, ng_pending_vec *out)
{
	unsigned planned = 0;

	for (uint32_t i = 0; i < d->n; i++) {
		struct ng_track *s = &t->slot[d->at[i]];

		/* Still within the window: a second flow to an address the
		 * first one refreshed plans nothing more. */
		if (!s->used || s->proto != proto || dport < s->p_lo || dport > s->p_hi ||
		    !ng_ip_eq(&s->ip, dst) || s->expires - d->now_ms > d->window_ms)
			continue;
		if (pend_again(out, s, s->lifetime, d->now_ms) == 0) {
			s->kept = true;
			planned++;
		}
	}
	return planned;
}

void ng_tracker_revert(struct ng_tracker *t, const ng_pending_vec *p)
{
	for (size_t i = p->n; i-- > 0;) {
		const struct ng_pending *q = &p->v[i];
		struct ng_track *s = find(t, &q->e, q->ranged);

		if (!s)
			continue;
		if (q->old_expires == 0) {
			erase(t, s);
		} else {
			s->expires = q->old_expires;
			s->lifetime = q->old_lifetime;
			s->kept = q->old_kept;
		}
	}
}

unsigned ng_tracker_expire(struct ng_tracker *t, int64_t now_ms)
{
	unsigned gone = 0;

	for (uint32_t i = 0; i < t->cap;) {
		if (t->slot[i].used && t->slot[i].expires <= now_ms) {
			erase(t, &t->slot[i]);
			gone++;
			continue; /* the slot may hold a shifted element now */
		}
		i++;
	}
	return gone;
}

int ng_tracker_learned(struct ng_tracker *t, const struct ng_elem *e, bool ranged, int64_t expires)
{
	struct ng_track *s = find(t, e, ranged);

	if (!s && !(s = insert(t, e, ranged)))
		return -1;
	if (expires > s->expires)
		s->expires = expires;
	s->lifetime = e->timeout;
	return 0;
}

bool ng_tracker_get(const struct ng_tracker *t, const struct ng_elem *e, bool ranged, int64_t *expires,
		    bool *kept)
{
	const struct ng_track *s = find(t, e, ranged);

	if (!s)
		return false;
	*expires = s->expires;
	*kept = s->kept;
	return true;
}

static struct ng_elem elem_of(const struct ng_track *s)
{
	return (struct ng_elem){
		.lo = s->ip, .hi = s->ip, .proto = s->proto, .p_lo = s->p_lo, .p_hi = s->p_hi};
}

void ng_tracker_each(const struct ng_tracker *t, ng_tracker_each_fn fn, void *data)
{
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct ng_track *s = &t->slot[i];
		struct ng_elem e = elem_of(s);

		if (s->used)
			fn(&e, s->ranged, s->expires, s->kept, data);
	}
}

int ng_tracker_copy(const struct ng_tracker *from, struct ng_tracker *to,
		    bool (*keep)(const struct ng_elem *e, const void *data), const void *data)
{
	for (uint32_t i = 0; i < from->cap; i++) {
		const struct ng_track *s = &from->slot[i];
		struct ng_elem e = elem_of(s);
		struct ng_track *c;

		if (!s->used || (keep && !keep(&e, data)))
			continue;
		if (!(c = insert(to, &e, s->ranged)))
			return -1;
		c->expires = s->expires;
		c->lifetime = s->lifetime;
		c->kept = s->kept;
	}
	return 0;
}

uint32_t ng_tracker_missing(const struct ng_tracker *mine, const struct ng_tracker *kernel, int64_t now_ms,
			    int64_t margin_ms, struct ng_elem *first, bool *first_ranged)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < mine->cap; i++) {
		const struct ng_track *s = &mine->slot[i];
		struct ng_elem e = elem_of(s);
		uint32_t k;

		if (!s->used || s->expires - now_ms <= margin_ms)
			continue;
		k = slot_of(kernel, &e, s->ranged);
		if (k < kernel->cap && kernel->slot[k].expires >= s->expires - margin_ms)
			continue;
		if (n++ == 0) {
			*first = e;
			*first_ranged = s->ranged;
		}
	}
	return n;
}

uint32_t ng_tracker_count(const struct ng_tracker *t)
{
	return t->n;
}

void ng_tracker_free(struct ng_tracker *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
