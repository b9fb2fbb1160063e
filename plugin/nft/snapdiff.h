/* Comparing two snapshots: the wanted one (from the batch ADD would send)
 * and the one read from the kernel. */
#ifndef NG_SNAPDIFF_H
#define NG_SNAPDIFF_H

#include "base/err.h"
#include "nft/snapshot.h"

/* Compares; 0 when identical (and no name-set problems), else -1 with
 * code 111, msg naming the count and the first difference, details the
 * next dozen (not the first again). Set elements in nft's syntax. */
int ng_snapshot_diff(struct ng_snapshot *want, struct ng_snapshot *have, struct ng_err *err);

#endif
