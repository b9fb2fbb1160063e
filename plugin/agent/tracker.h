/* What the agent has put into a pod's learned name sets and until when,
 * so that every later answer refreshes an address (never shortens it) with
 * one commit, and an unchanged answer costs no commit at all. The kernel's
 * timeouts are the truth for the packet path; this is the agent's view of
 * them, never later than the kernel's (each expiry is computed before its
 * commit is sent).
 *
 * Bounded: at most NG_TRACK_MAX elements per pod (an open-addressing table
 * of at most 2 * NG_TRACK_MAX slots of 48 bytes: 768 KiB worst case, a few
 * KiB for a pod with tens of names). Past it, answers still pass but teach
 * nothing more (counted). */
#ifndef NG_AGENT_TRACKER_H
#define NG_AGENT_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/vec.h"
#include "policy/learn.h"

#define NG_TRACK_MAX 8192

struct ng_track {
	struct ng_ip ip;
	uint8_t proto;
	bool ranged; /* names_vX_ranges, else names_vX */
	bool used;
	uint16_t p_lo, p_hi;
	uint32_t lifetime; /* s, the last one committed */
	int64_t expires;   /* ms, CLOCK_MONOTONIC */
};

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
};
typedef NG_VEC(struct ng_pending) ng_pending_vec;

/* Adds to `out` what `r` requires: elements not tracked or expired, and
 * those whose new expiry is later than the tracked one by more than a tenth
 * of the lifetime (at most 60 s). Updates the tracker at once; revert if
 * the commit fails. *full counts elements refused by the bound. 0 or -1. */
int ng_tracker_plan(struct ng_tracker *t, const struct ng_learn_result *r, int64_t now_ms,
		    ng_pending_vec *out, unsigned *full);
/* Plans a refresh of one tracked element to now + lifetime (live
 * connections keep their address). */
int ng_tracker_plan_one(struct ng_tracker *t, struct ng_track *k, uint32_t lifetime, int64_t now_ms,
			ng_pending_vec *out);
void ng_tracker_revert(struct ng_tracker *t, const ng_pending_vec *p);
/* Forgets elements whose expiry has passed; returns how many. */
unsigned ng_tracker_expire(struct ng_tracker *t, int64_t now_ms);
/* Records an element read back from the kernel (restart). */
int ng_tracker_learned(struct ng_tracker *t, const struct ng_elem *e, bool ranged, int64_t expires);
void ng_tracker_free(struct ng_tracker *t);

#endif
