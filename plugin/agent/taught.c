/* What each name entry taught. See taught.h. */
#include "agent/taught.h"

#include <stdlib.h>
#include <string.h>

int ng_taught_init(struct ng_taught *t, const struct ng_policy *pol)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < pol->name_entries.n; i++)
		if (ng_vec_push(&t->entries, &pol->name_entries.v[i]) < 0)
			return -1;
	for (size_t i = 0; i < pol->name_pieces.n; i++) {
		struct ng_elem e = pol->name_pieces.v[i];

		e.dns_name = NULL; /* points into the policy: not ours to keep */
		if (ng_vec_push(&t->pieces, &e) < 0)
			return -1;
	}
	return 0;
}

void ng_taught_free(struct ng_taught *t)
{
	ng_vec_free(&t->entries);
	ng_vec_free(&t->pieces);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static uint32_t hash(uint16_t entry, const struct ng_ip *ip)
{
	uint32_t h = 2166136261u ^ entry;
	int n = ng_ip_len(ip->fam);

	for (int i = 0; i < n; i++)
		h = (h ^ ip->a[i]) * 16777619u;
	return h;
}

static struct ng_taught_pair *find(const struct ng_taught *t, uint16_t entry, const struct ng_ip *ip)
{
	if (!t->cap)
		return NULL;
	for (uint32_t i = hash(entry, ip) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct ng_taught_pair *s = &t->slot[i];

		if (!s->used)
			return NULL;
		if (s->entry == entry && ng_ip_eq(&s->ip, ip))
			return s;
	}
}

/* Puts every pair of `old` (cap slots) into a table of `cap` slots. */
static int rehash(struct ng_taught *t, uint32_t cap, bool (*keep)(const struct ng_taught_pair *, void *),
		  void *data)
{
	struct ng_taught_pair *old = t->slot, *s = calloc(cap, sizeof(*s));
	uint32_t old_cap = t->cap;

	if (!s)
		return -1;
	t->n = 0;
	for (uint32_t i = 0; i < old_cap; i++) {
		uint32_t j;

		if (!old[i].used || (keep && !keep(&old[i], data)))
			continue;
		for (j = hash(old[i].entry, &old[i].ip) & (cap - 1); s[j].used; j = (j + 1) & (cap - 1)) {
		}
		s[j] = old[i];
		t->n++;
	}
	free(old);
	t->slot = s;
	t->cap = cap;
	return 0;
}

int ng_taught_note(struct ng_taught *t, uint16_t entry, const struct ng_ip *ip)
{
	uint32_t i;

	if (entry >= t->entries.n)
		return -1;
	if (find(t, entry, ip))
		return 0;
	if (t->n >= NG_TRACK_MAX ||
	    ((t->n + 1) * 2 > t->cap && rehash(t, t->cap ? t->cap * 2 : 16, NULL, NULL) < 0)) {
		t->full++;
		return -1;
	}
	for (i = hash(entry, ip) & (t->cap - 1); t->slot[i].used; i = (i + 1) & (t->cap - 1)) {
	}
	t->slot[i] = (struct ng_taught_pair){.ip = *ip, .entry = entry, .used = true};
	t->n++;
	return 1;
}

bool ng_taught_has(const struct ng_taught *t, uint16_t entry, const struct ng_ip *ip)
{
	return find(t, entry, ip) != NULL;
}

uint32_t ng_taught_count(const struct ng_taught *t)
{
	return t->n;
}

/* Piece k lies within entry e's protocol and ports. */
static bool piece_of(const struct ng_name_entry *e, const struct ng_elem *pc)
{
	return pc->proto == e->proto && pc->p_lo >= e->p_lo && pc->p_hi <= e->p_hi;
}

static struct ng_elem elem_of(const struct ng_ip *ip, const struct ng_elem *pc)
{
	return (struct ng_elem){.lo = *ip, .hi = *ip, .proto = pc->proto, .p_lo = pc->p_lo, .p_hi = pc->p_hi};
}

struct trackers {
	const struct ng_taught *t;
	const struct ng_tracker *tr, *tr_node;
};

static bool held(const struct ng_tracker *tr, const struct ng_elem *e, int64_t *expires, bool *kept)
{
	*expires = 0;
	*kept = false;
	return tr && ng_tracker_get(tr, e, e->p_lo != e->p_hi, expires, kept);
}

/* Is any element of pair p's entry tracked on either side? */
static bool still_held(const struct ng_taught_pair *p, void *data)
{
	const struct trackers *c = data;
	const struct ng_name_entry *e = &c->t->entries.v[p->entry];

	for (size_t k = 0; k < c->t->pieces.n; k++) {
		struct ng_elem el = elem_of(&p->ip, &c->t->pieces.v[k]);
		int64_t x;
		bool kept;

		if (piece_of(e, &c->t->pieces.v[k]) &&
		    (held(c->tr, &el, &x, &kept) || held(c->tr_node, &el, &x, &kept)))
			return true;
	}
	return false;
}

unsigned ng_taught_prune(struct ng_taught *t, const struct ng_tracker *tr, const struct ng_tracker *tr_node)
{
	struct trackers c = {t, tr, tr_node};
	uint32_t before = t->n;

	if (!t->n || rehash(t, t->cap, still_held, &c) < 0)
		return 0;
	return before - t->n;
}

/* ---- rows for the view ----------------------------------------------------- */

struct rows_ctx {
	const struct ng_taught *t;
	const struct ng_tracker *tr, *tr_node;
	int64_t mono, wall;
	size_t max;
	struct ng_view_pod *out;
	int rc;
};

static int64_t wall_of(const struct rows_ctx *c, int64_t expires)
{
	return expires ? c->wall + (expires - c->mono) : 0;
}

static void add_row(struct rows_ctx *c, uint16_t name, const struct ng_elem *el)
{
	struct ng_view_learned r = {
		.ip = el->lo, .name = name, .proto = el->proto, .p_lo = el->p_lo, .p_hi = el->p_hi};
	int64_t pod_x, node_x;
	bool kept_pod, kept_node;

	bool on_pod = held(c->tr, el, &pod_x, &kept_pod), on_node = held(c->tr_node, el, &node_x, &kept_node);

	if (!on_pod && !on_node)
		return;
	if (c->out->taught.n >= c->max) {
		c->out->taught_more++;
		return;
	}
	r.pod_expires_ms = wall_of(c, pod_x);
	r.node_expires_ms = wall_of(c, node_x);
	r.kept_alive = kept_pod || kept_node;
	if (ng_vec_push(&c->out->taught, &r) < 0)
		c->rc = -1;
	else if (name != NG_VIEW_NAME_NONE)
		c->out->taught_names.v[name].addresses++;
}

/* A tracked element no pair names: shown under no name (once, from the
 * pod's side, or from the node's when the pod's does not hold it). */
static void unnamed(const struct ng_elem *el, bool ranged, int64_t expires, bool kept, void *data, bool node)
{
	struct rows_ctx *c = data;
	int64_t x;
	bool k;

	(void)ranged;
	(void)expires;
	(void)kept;
	for (size_t i = 0; i < c->t->entries.n; i++)
		if (el->proto == c->t->entries.v[i].proto && el->p_lo >= c->t->entries.v[i].p_lo &&
		    el->p_hi <= c->t->entries.v[i].p_hi && ng_taught_has(c->t, (uint16_t)i, &el->lo))
			return;
	if (node && held(c->tr, el, &x, &k))
		return;
	add_row(c, NG_VIEW_NAME_NONE, el);
}

static void unnamed_pod(const struct ng_elem *el, bool ranged, int64_t expires, bool kept, void *data)
{
	unnamed(el, ranged, expires, kept, data, false);
}

static void unnamed_node(const struct ng_elem *el, bool ranged, int64_t expires, bool kept, void *data)
{
	unnamed(el, ranged, expires, kept, data, true);
}

int ng_taught_rows(const struct ng_taught *t, const struct ng_tracker *tr, const struct ng_tracker *tr_node,
		   int64_t now_mono_ms, int64_t now_wall_ms, size_t max, struct ng_view_pod *out)
{
	struct rows_ctx c = {t, tr, tr_node, now_mono_ms, now_wall_ms, max, out, 0};

	out->taught.n = out->taught_names.n = 0;
	out->taught_more = 0;
	for (size_t i = 0; i < t->entries.n; i++) {
		struct ng_view_name vn;

		ng_view_name_set(&vn, &t->entries.v[i]);
		if (ng_vec_push(&out->taught_names, &vn) < 0)
			return -1;
	}
	/* One pass, under the pod's lock: the reader groups rows by name. */
	for (uint32_t s = 0; s < t->cap; s++) {
		const struct ng_taught_pair *p = &t->slot[s];

		if (!p->used || p->entry >= NG_VIEW_NAME_NONE)
			continue;
		for (size_t k = 0; k < t->pieces.n; k++)
			if (piece_of(&t->entries.v[p->entry], &t->pieces.v[k])) {
				struct ng_elem el = elem_of(&p->ip, &t->pieces.v[k]);

				add_row(&c, p->entry, &el);
			}
	}
	ng_tracker_each(tr, unnamed_pod, &c);
	if (tr_node)
		ng_tracker_each(tr_node, unnamed_node, &c);
	out->has_taught = true;
	return c.rc;
}
