/* The elements of one learned name set as the kernel holds them, decoded
 * back into the policy's element shape with the time each has left: what a
 * restarted agent re-reads into its tracker and what the node's metrics
 * count per name entry. */
#ifndef NG_LEARNEDSET_H
#define NG_LEARNEDSET_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "nft/render_objs.h"
#include "nft/render_sets.h"
#include "policy/policy.h"

/* The learned set of family index `f` (0: IPv4) for single ports
 * (names_vX) or port ranges (names_vX_ranges), as an index into
 * ng_render_set_specs' array. */
static inline int ng_learned_set(int f, bool ranged)
{
	return (ranged ? NG_S_TTL4 : NG_S_NAMES4) + f;
}

/* el->timeout: the element's timeout in s; left_ms: 0 when it has none. */
typedef void (*ng_learned_fn)(const struct ng_elem *el, uint64_t left_ms, void *data);

/* Dumps set spec->name of table `table` of `family` (NG_TABLE, inet: the
 * pod's; a host-side netdev table has the same sets) and calls fn per
 * element whose key has the set's layout. 0, -ENOENT, or -1 with err. */
int ng_learned_each(struct ng_nl *nl, uint8_t family, const char *table, const struct ng_set_spec *spec,
		    ng_learned_fn fn, void *data, struct ng_err *err);

#endif
