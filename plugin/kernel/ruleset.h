/* The three things the plugin does to a pod's ruleset, each over an open
 * transport: replace it (ADD), remove it (DEL), compare it (CHECK). */
#ifndef NG_RULESET_H
#define NG_RULESET_H

#include "base/err.h"
#include "kernel/nl.h"
#include "policy/policy.h"
#include "nft/snapshot.h"

/* One transaction replacing `table` with the policy. Retried once, with a
 * freshly numbered batch, when replies were lost (the batch is idempotent). */
int ng_ruleset_apply(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err);

/* One transaction removing `table` if present. */
int ng_ruleset_delete(struct ng_nl *nl, const char *table, struct ng_err *err);

/* Reads `table` of family s->family (0: inet) from the kernel into a
 * snapshot. Returns 0, -ENOENT when the table does not exist, or -1 with
 * err. Repeats the dump (up to 3 times) if the ruleset generation changed
 * while reading. */
int ng_ruleset_snapshot(struct ng_nl *nl, const char *table, struct ng_snapshot *s, struct ng_err *err);

/* Dumps the elements of one set (GETSETELEM): cb per reply message. 0,
 * -ENOENT (no such table or set), or -1 with err. */
int ng_ruleset_dump_set(struct ng_nl *nl, uint8_t family, const char *table, const char *set,
			ng_nl_dump_cb cb, void *data, struct ng_err *err);

/* CHECK: 0 when the kernel's tables (inet, and netdev with the guard) are
 * exactly what `p` renders to (name-set elements bounded by their
 * entries); code 111 naming what differs. `objects`, when not NULL,
 * receives the number of objects compared. */
int ng_ruleset_check(struct ng_nl *nl, const struct ng_policy *p, const char *table, size_t *objects,
		     struct ng_err *err);

/* "resolve" mode: asks each name pinned at ADD again (the node's resolver)
 * and fails (code 111) naming a name whose current answer no longer holds
 * an address pinned for it. 0 in "learn" mode and without names. */
int ng_ruleset_check_answers(struct ng_nl *nl, const struct ng_policy *p, const char *table,
			     struct ng_err *err);

#endif
