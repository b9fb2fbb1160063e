/* 0.2's state directory, read by 0.3: an upgrade replaces the agent while
 * the pods it served run on, and their answers would be dropped if the new
 * agent could not read their records. 0.2 kept two files per attachment,
 * decisions/<key>.json (every pod: the decision, ADD's stdin, the tables)
 * and pods/<key>.json (learn-mode pods: the nonce, the namespace's device
 * and inode, CNI_ARGS), and no link facts. */
#ifndef NG_MIGRATE_H
#define NG_MIGRATE_H

#include <jansson.h>

#include "base/err.h"
#include "state/record.h"

#define NG_V1_DECISIONS_DIR "decisions"

/* One 0.2 attachment into a record (version 2) without link facts: from
 * its decision record `dec` and, for a learn-mode pod, its state record
 * `pod` (may be NULL). 0, or -1 with err (code 6). Pure. */
int ng_migrate_v1(const json_t *dec, const json_t *pod, struct ng_record *out, struct ng_err *err);

#endif
