/* What each of a pod's name entries taught: the (entry, address) pairs of
 * the answers the learner committed, for `status --names`. The trackers
 * (agent/tracker.h) know elements (address, protocol, ports) and their
 * expiry, not the name that taught them: two entries on the same port
 * share an element, and only this table can say which name an address
 * is for. It holds its own copy of the pod's name entries and their
 * (protocol, port) pieces, so a reader on another thread (under the pod's
 * lock, agent/podlock.h) needs nothing else of the learner's pod.
 *
 * Bounded: at most NG_TRACK_MAX pairs (an open-addressing table of at most
 * 2 * NG_TRACK_MAX slots of 22 bytes); past it a pair is not noted
 * (counted) and its address is shown under no name. A pair goes when no
 * element it names is tracked on either side any more. */
#ifndef NG_AGENT_TAUGHT_H
#define NG_AGENT_TAUGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/tracker.h"
#include "base/addr.h"
#include "node/nodeview.h"
#include "policy/policy.h"

struct ng_taught_pair {
	struct ng_ip ip;
	uint16_t entry; /* index into entries */
	bool used;
};

struct ng_taught {
	ng_name_entry_vec entries; /* the pod's name entries, copied */
	ng_elem_vec pieces;        /* their disjoint (protocol, ports) pieces, copied */
	struct ng_taught_pair *slot;
	uint32_t cap, n;
	uint64_t full; /* pairs not noted: the bound */
};

/* Copies the policy's name entries and pieces. -1 out of memory. */
int ng_taught_init(struct ng_taught *t, const struct ng_policy *pol);
void ng_taught_free(struct ng_taught *t);
/* Entry `entry` taught `ip`. 1 new, 0 known, -1 full or out of memory. */
int ng_taught_note(struct ng_taught *t, uint16_t entry, const struct ng_ip *ip);
bool ng_taught_has(const struct ng_taught *t, uint16_t entry, const struct ng_ip *ip);
/* Forgets the pairs none of whose elements either tracker holds;
 * returns how many. */
unsigned ng_taught_prune(struct ng_taught *t, const struct ng_tracker *tr, const struct ng_tracker *tr_node);
uint32_t ng_taught_count(const struct ng_taught *t);

/* The rows of `status --names`: for each pair, each element of its entry's
 * pieces that a tracker holds (each side's expiry as unix ms, 0: not
 * held; kept alive); then each tracked element no pair names (learned
 * before the agent restarted: the name is not known), under
 * NG_VIEW_NAME_NONE. At most `max` rows; the rest counted in *more.
 * tr_node may be NULL. -1 out of memory. */
int ng_taught_rows(const struct ng_taught *t, const struct ng_tracker *tr, const struct ng_tracker *tr_node,
		   int64_t now_mono_ms, int64_t now_wall_ms, size_t max, struct ng_view_pod *out);

#endif
