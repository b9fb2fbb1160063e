/* What the agent has put into a pod's learned name sets and until when,
 * so that every later answer refreshes an address (never shortens it) with
 * one commit, and an unchanged answer costs no commit at all. The kernel's
 * timeouts are the truth for the packet path; this is the agent's view of
 * them, never later than the kernel's (each expiry is computed before its
 * commit is sent).
 *
 * Bounded: at most NG_TRACK_MAX elements per pod (an open-addressing table
 * of at most 2 * NG_TRACK_MAX slots of 40 bytes: 640 KiB worst case, a few
 * KiB for a pod with tens of names). Past it, answers still pass but teach
 * nothing more (counted). */
#ifndef NG_AGENT_TRACKER_H
#define NG_AGENT_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/vec.h"
#include "policy/learn.h"

#define NG_TRACK_MAX 8192

/* Private to tracker.c (an open-addressing table, linear probing): every
 * question about the elements is one of the functions below. */
struct ng_tracker {
	struct ng_track *slot;
	uint32_t cap, n;
};

/* An element a commit will add (refresh: delete it first, then add, in the
 * same transaction: re-adding alone does not move its expiry). */
struct ng_pending {
	struct ng_elem e; /* e.timeout: lifetime in s */
	bool ranged, refresh;
	int64_t old_expires; /* 0: new to the tracker */
	uint32_t old_lifetime;
	bool old_kept;
};
typedef NG_VEC(struct ng_pending) ng_pending_vec;

/* Every function that plans appends to `out` and updates the tracker at
 * once (each expiry is computed before its commit is sent): revert with
 * the same list if the commit fails. */

/* What `r` requires: elements not tracked or expired, and those whose new
 * expiry is later than the tracked one by more than a tenth of the
 * lifetime (at most 60 s); never a shorter one. *full counts elements
 * refused by the bound. 0 or -1 (out of memory). */
int ng_tracker_plan(struct ng_tracker *t, const struct ng_learn_result *r, int64_t now_ms,
		    ng_pending_vec *out, unsigned *full);

/* For a rebuild of the tables (agent/podlock.h): every live element, with the
 * expiry and lifetime it had (the agent's view stays the truth for what it
 * learned; a repair is not a new lease). Returns how many, or -1. */
int ng_tracker_relearn(struct ng_tracker *t, int64_t now_ms, ng_pending_vec *out);

/* The elements that expire within `window_ms` of `now_ms`: all a
 * keep-alive pass looks at (the pod chooses how many flows conntrack
 * lists; none may cost a walk of the whole tracker). Valid until the
 * tracker next gains or loses an element. */
struct ng_tracker_due {
	uint32_t *at; /* their places in the table */
	uint32_t n;
	int64_t now_ms, window_ms;
};
/* Fills `d` (nothing allocated when none is due); its n, or -1. */
int ng_tracker_due(const struct ng_tracker *t, int64_t now_ms, int64_t window_ms, struct ng_tracker_due *d);
void ng_tracker_due_free(struct ng_tracker_due *d);

/* The i-th due element of `d` (i < d->n), as an element and its set. */
void ng_tracker_due_elem(const struct ng_tracker *t, const struct ng_tracker_due *d, uint32_t i,
			 struct ng_elem *e, bool *ranged);
/* A live flow to dst, proto, dport: its due elements (same address and
 * protocol, the port in their range, still within the window) planned to
 * now + their lifetime, so live connections keep their address. Returns
 * how many were planned. */
unsigned ng_tracker_keepalive(struct ng_tracker *t, const struct ng_tracker_due *d, const struct ng_ip *dst,
			      uint8_t proto, uint16_t dport, ng_pending_vec *out);

/* Undoes what planned `p` (newest first): new elements forgotten, the
 * others' expiry and lifetime restored. */
void ng_tracker_revert(struct ng_tracker *t, const ng_pending_vec *p);
/* Forgets elements whose expiry has passed; returns how many. */
unsigned ng_tracker_expire(struct ng_tracker *t, int64_t now_ms);
/* Records an element read back from the kernel (restart), never moving a
 * tracked expiry earlier. 0, or -1 (full or out of memory). */
int ng_tracker_learned(struct ng_tracker *t, const struct ng_elem *e, bool ranged, int64_t expires);
/* Element e of the single-port (ranged false) or port-range set: its
 * expiry (ms, CLOCK_MONOTONIC) and whether a live connection renewed its
 * lease last (an answer since clears that). False when not tracked. */
bool ng_tracker_get(const struct ng_tracker *t, const struct ng_elem *e, bool ranged, int64_t *expires,
		    bool *kept);
/* Every tracked element, in no order. */
typedef void (*ng_tracker_each_fn)(const struct ng_elem *e, bool ranged, int64_t expires, bool kept,
				   void *data);
void ng_tracker_each(const struct ng_tracker *t, ng_tracker_each_fn fn, void *data);
/* For a look at the kernel without the pod's lock (agent/learncheck.h):
 * `to` (empty) gets the elements of `from` that keep(element, data) keeps
 * (NULL: all), each with its expiry. 0, or -1 out of memory. */
int ng_tracker_copy(const struct ng_tracker *from, struct ng_tracker *to,
		    bool (*keep)(const struct ng_elem *e, const void *data), const void *data);
/* The elements of `mine` live for more than `margin_ms` after `now_ms`
 * that `kernel` (filled from a table's learned sets with
 * ng_tracker_learned, each at the kernel's own expiry) does not hold, or
 * holds until more than `margin_ms` earlier: how many; the first into
 * *first and *first_ranged. */
uint32_t ng_tracker_missing(const struct ng_tracker *mine, const struct ng_tracker *kernel, int64_t now_ms,
			    int64_t margin_ms, struct ng_elem *first, bool *first_ranged);
/* Elements tracked. */
uint32_t ng_tracker_count(const struct ng_tracker *t);
void ng_tracker_free(struct ng_tracker *t);

#endif
