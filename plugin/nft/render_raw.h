/* The packet-socket guard: the netdev table on the pod's interface that
 * holds frames written with AF_PACKET to the egress policy, statelessly. */
#ifndef NG_RENDER_RAW_H
#define NG_RENDER_RAW_H

#include "nft/batch.h"
#include "nft/render_sets.h"
#include "policy/policy.h"

/* The netdev table's body, from the inet table's set list (the same
 * sets, so the two tables cannot disagree on a destination). */
int ng_render_raw_body(const struct ng_policy *p, struct ng_batch *b, const struct ng_set_spec *inet_sets);

#endif
