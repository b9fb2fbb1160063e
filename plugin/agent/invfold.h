/* The agent's side of stateDir/invocations.log (cni/invstats.h): read from
 * where it left off, complete lines folded into the totals, a torn tail
 * kept for the next read. When the file passes NG_INVFOLD_ROTATE bytes it
 * is renamed to invocations.log.old (plugins then create a new one); the
 * old file is read on for NG_INVFOLD_GRACE_MS, so a plugin that opened it
 * just before the rename still counts, then closed. */
#ifndef NG_INVFOLD_H
#define NG_INVFOLD_H

#include <stdint.h>
#include <sys/types.h>

#include "state/invstats.h"
#include "node/nodeview.h"

#define NG_INVFOLD_ROTATE   ((off_t)256 * 1024)
#define NG_INVFOLD_GRACE_MS 2000

struct ng_invfold {
	int fd;
	off_t off;
	char part[NG_INV_LINE_MAX];
	size_t partn;
	int64_t rotated_ms; /* 0: not rotating */
};

void ng_invfold_init(struct ng_invfold *f);
/* Folds what was appended since the last call. */
void ng_invfold_run(struct ng_invfold *f, const char *state_dir, int64_t now_ms, struct ng_invtotals *t);
void ng_invfold_close(struct ng_invfold *f);

/* Folds the complete lines of buf[0..n) (after f->part) and keeps the
 * torn tail in f->part. Pure. */
void ng_invfold_feed(struct ng_invfold *f, const char *buf, size_t n, struct ng_invtotals *t);

#endif
