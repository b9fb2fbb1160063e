/* Set normalisation: the kernel's pipapo sets (concatenations with
 * intervals) refuse an element whose start or end falls inside an existing
 * one, so the union of allow entries ("10.0.0.0/8:443" from the platform and
 * "10.1.2.3:443" from a grant) must be rewritten as disjoint boxes before it
 * is sent. Elements are boxes: address range x second-dimension range, per
 * protocol. The sweep runs along the second dimension; within each
 * elementary range the covering address ranges are merged, and consecutive
 * elementary ranges with the same address rows are joined again. */
#include "policy/normalize.h"

#include <stdlib.h>
#include <string.h>

struct span { /* a merged address range of one row */
	struct ng_ip lo, hi;
	uint32_t timeout;
	const char *dns_name; /* "resolve" mode: spans of different names never merge */
};

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}
typedef NG_VEC(struct span) span_vec;

static int cmp_addr_lo(const void *a, const void *b)
{
	const struct ng_elem *x = *(const struct ng_elem *const *)a;
	const struct ng_elem *y = *(const struct ng_elem *const *)b;
	int c = ng_ip_cmp(&x->lo, &y->lo);

	return c ? c : ng_ip_cmp(&x->hi, &y->hi);
}

static int cmp_plo(const void *a, const void *b)
{
	const struct ng_elem *x = a, *y = b;

	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	return (x->p_lo > y->p_lo) - (x->p_lo < y->p_lo);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Is `hi` immediately before or inside [lo...]? i.e. lo <= hi + 1. */
static bool touches(const struct ng_ip *hi, const struct ng_ip *lo)
{
	struct ng_ip next = *hi;

	if (ng_ip_cmp(lo, hi) <= 0)
		return true;
	return ng_ip_inc(&next) && ng_ip_eq(&next, lo);
}

/* A boundary of the address line: an address, or the point past the last
 * address of the family (the end of a range that runs to all-ones). */
struct bound {
	struct ng_ip ip;
	bool past_end;
};

static int cmp_bound(const void *a, const void *b)
{
	const struct bound *x = a, *y = b;

	if (x->past_end != y->past_end)
		return x->past_end ? 1 : -1;
	return x->past_end ? 0 : ng_ip_cmp(&x->ip, &y->ip);
}

static int push_span(span_vec *row, const struct ng_ip *lo, const struct ng_ip *hi, uint32_t timeout,
		     const char *dns_name)
{
	struct span *last = row->n ? &row->v[row->n - 1] : NULL;

	if (last && last->timeout == timeout && touches(&last->hi, lo) &&
	    (same_name(last->dns_name, dns_name) || ng_ip_cmp(lo, &last->hi) <= 0)) {
		if (ng_ip_cmp(hi, &last->hi) > 0)
			last->hi = *hi;
		return 0;
	}
	struct span s = {.lo = *lo, .hi = *hi, .timeout = timeout, .dns_name = dns_name};
	return ng_vec_push(row, &s);
}

/* Merges the address ranges of the active boxes into one row of disjoint
 * spans. When every range has the same lifetime (always so for static
 * sets) ranges that overlap or touch simply merge. When lifetimes differ
 * (name sets), the line is cut at every start and every end + 1, each
 * segment takes the longest lifetime of the ranges covering it, and
 * neighbouring segments merge only when their lifetimes agree: one name's
 * lifetime is never stretched onto a neighbouring address. */
static int build_row(const struct ng_elem **act, size_t n, span_vec *row)
{
	NG_VEC(struct bound) bounds = {0};
	bool same = true;
	int rc = -1;

	row->n = 0;
	/* act is an array of pointers: sizeof(act[0]) is meant. */
	qsort(act, n, sizeof(act[0]), cmp_addr_lo); // NOLINT(bugprone-sizeof-expression)
	for (size_t i = 1; i < n; i++)
		same &= act[i]->timeout == act[0]->timeout;
	if (same) {
		for (size_t i = 0; i < n; i++) {
			struct span *last = row->n ? &row->v[row->n - 1] : NULL;

			if (last && ng_ip_cmp(&act[i]->lo, &last->hi) <= 0) {
				if (ng_ip_cmp(&act[i]->hi, &last->hi) > 0)
					last->hi = act[i]->hi;
				continue;
			}
			if (push_span(row, &act[i]->lo, &act[i]->hi, act[i]->timeout, act[i]->dns_name) < 0)
				return -1;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct bound lo = {.ip = act[i]->lo}, end = {.ip = act[i]->hi};

		end.past_end = !ng_ip_inc(&end.ip);
		if (ng_vec_push(&bounds, &lo) < 0 || ng_vec_push(&bounds, &end) < 0)
			goto out;
	}
	qsort(bounds.v, bounds.n, sizeof(*bounds.v), cmp_bound);
	for (size_t k = 0; k + 1 < bounds.n; k++) {
		struct ng_ip seg_lo = bounds.v[k].ip, seg_hi = bounds.v[k + 1].ip;
		uint32_t best = 0;
		bool covered = false;

		if (bounds.v[k].past_end || cmp_bound(&bounds.v[k], &bounds.v[k + 1]) == 0)
			continue;
		if (bounds.v[k + 1].past_end)
			memset(seg_hi.a, 0xff, ng_ip_len(seg_hi.fam));
		else
			ng_ip_dec(&seg_hi);
		for (size_t i = 0; i < n; i++) {
			if (ng_ip_cmp(&act[i]->lo, &seg_lo) <= 0 && ng_ip_cmp(&seg_lo, &act[i]->hi) <= 0) {
				covered = true;
				if (act[i]->timeout > best)
					best = act[i]->timeout;
			}
		}
		if (covered && push_span(row, &seg_lo, &seg_hi, best, NULL) < 0)
			goto out;
	}
	rc = 0;
out:
	ng_vec_free(&bounds);
	return rc;
}

static bool rows_equal(const span_vec *a, const span_vec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (!ng_ip_eq(&a->v[i].lo, &b->v[i].lo) || !ng_ip_eq(&a->v[i].hi, &b->v[i].hi) ||
		    a->v[i].timeout != b->v[i].timeout)
			return false;
	return true;
}

static int emit_row(ng_elem_vec *out, const span_vec *row, uint8_t proto, uint32_t p_lo, uint32_t p_hi)
{
	for (size_t i = 0; i < row->n; i++) {
		struct ng_elem e = {
			.lo = row->v[i].lo,
			.hi = row->v[i].hi,
			.proto = proto,
			.p_lo = (uint16_t)p_lo,
			.p_hi = (uint16_t)p_hi,
			.timeout = row->v[i].timeout,
			.dns_name = row->v[i].dns_name,
		};
		if (ng_vec_push(out, &e) < 0)
			return -1;
	}
	return 0;
}

/* One protocol's boxes: in[0..n), sorted by p_lo. */
static int normalize_proto(const struct ng_elem *in, size_t n, ng_elem_vec *out)
{
	NG_VEC(uint32_t) bounds = {0};
	NG_VEC(const struct ng_elem *) act = {0};
	span_vec row = {0}, prev = {0};
	uint32_t prev_lo = 0, prev_hi = 0;
	bool have_prev = false;
	size_t next = 0;
	int rc = -1;

	/* Elementary ranges of the second dimension: every start and every
	 * end + 1 (up to 65536, so uint32). */
	for (size_t i = 0; i < n; i++) {
		uint32_t lo = in[i].p_lo, end = (uint32_t)in[i].p_hi + 1;

		if (ng_vec_push(&bounds, &lo) < 0 || ng_vec_push(&bounds, &end) < 0)
			goto out;
	}
	qsort(bounds.v, bounds.n, sizeof(uint32_t), cmp_u32);

	for (size_t b = 0; b + 1 < bounds.n; b++) {
		uint32_t lo = bounds.v[b], hi = bounds.v[b + 1] - 1;
		size_t keep = 0;

		if (bounds.v[b + 1] == bounds.v[b])
			continue;
		/* Drop boxes that ended, add boxes that start here. */
		for (size_t i = 0; i < act.n; i++)
			if (act.v[i]->p_hi >= lo)
				act.v[keep++] = act.v[i];
		act.n = keep;
		while (next < n && in[next].p_lo <= lo) {
			const struct ng_elem *e = &in[next++];

			/* act is a vector of pointers (sizeof a pointer is meant). */
			// NOLINTNEXTLINE(bugprone-sizeof-expression)
			if (e->p_hi >= lo && ng_vec_push(&act, &e) < 0)
				goto out;
		}
		if (act.n == 0) {
			if (have_prev && emit_row(out, &prev, in[0].proto, prev_lo, prev_hi) < 0)
				goto out;
			have_prev = false;
			continue;
		}
		if (build_row(act.v, act.n, &row) < 0)
			goto out;
		if (have_prev && prev_hi + 1 == lo && rows_equal(&prev, &row)) {
			prev_hi = hi;
			continue;
		}
		if (have_prev && emit_row(out, &prev, in[0].proto, prev_lo, prev_hi) < 0)
			goto out;
		/* row becomes prev (swap buffers). */
		span_vec tmp = prev;
		prev = row;
		row = tmp;
		prev_lo = lo;
		prev_hi = hi;
		have_prev = true;
	}
	if (have_prev && emit_row(out, &prev, in[0].proto, prev_lo, prev_hi) < 0)
		goto out;
	rc = 0;
out:
	ng_vec_free(&bounds);
	ng_vec_free(&act);
	ng_vec_free(&row);
	ng_vec_free(&prev);
	return rc;
}

int ng_elems_normalize(ng_elem_vec *v)
{
	ng_elem_vec out = {0};
	size_t start = 0;

	if (v->n < 2)
		return 0;
	qsort(v->v, v->n, sizeof(*v->v), cmp_plo);
	while (start < v->n) {
		size_t end = start;

		while (end < v->n && v->v[end].proto == v->v[start].proto)
			end++;
		if (normalize_proto(v->v + start, end - start, &out) < 0) {
			ng_vec_free(&out);
			return -1;
		}
		start = end;
	}
	ng_vec_free(v);
	*v = out;
	return 0;
}
