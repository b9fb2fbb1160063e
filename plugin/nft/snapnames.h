/* The DNS-name sets in a snapshot: their elements change with DNS, so
 * CHECK cannot recompute them; instead each element read from the kernel
 * is checked against the shapes the name entries allow, and the pinned set
 * is cross-checked against its _ttl twin (ng_snapshot_check_names). */
#ifndef NG_SNAPNAMES_H
#define NG_SNAPNAMES_H

#include <libnftnl/set.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nft/snapshot.h"

/* Whether `name` is one of the name sets; *ttl tells the _ttl twin. */
bool ng_snap_is_name_set(const char *name, bool *ttl);

/* One element of a name set (`hexkey` is "key-keyend" in hex): checked
 * (one address, a protocol and ports of a name entry; both sets) and kept
 * for the cross-check. */
void ng_snap_name_elem(struct ng_snapshot *s, const char *set, bool ttl, const uint8_t *key, uint32_t klen,
		       const uint8_t *end, uint32_t elen, const char *hexkey, struct nftnl_set_elem *e);

/* Cross-checks the name sets read from the kernel: every _ttl element must
 * be pinned (resolved at ADD), and every pinned element whose expiry is
 * still ahead must be in its _ttl set. Adds to `problems`. */
void ng_snapshot_check_names(struct ng_snapshot *s, time_t now);

#endif
