/* The three things the plugin does to a pod's ruleset, each over an open
 * transport: replace it (ADD), remove it (DEL), compare it (CHECK). */
#ifndef NG_RULESET_H
#define NG_RULESET_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "policy/policy.h"
#include "nft/snapshot.h"

/* Renders into a fresh batch (numbered from nl->seq) and commits it; again,
 * renumbered, when the kernel never saw it or refused it for another
 * transaction's sake (EBUSY, EAGAIN, ERESTART: nothing was applied), up to
 * NG_RULESET_TRIES times. `table_exists`, when not NULL,
 * says whether a refusal was EEXIST on an exclusive table create. */
typedef int (*ng_render_fn)(const void *ctx, struct ng_batch *b, struct ng_err *err);
/* Attempts of one transaction that the kernel did not see or refused for
 * another transaction's sake (ruleset.c). */
#define NG_RULESET_TRIES 10
int ng_ruleset_commit(struct ng_nl *nl, const char *table, ng_render_fn fn, const void *ctx,
		      bool *table_exists, struct ng_err *err);

/* One family's table `table`: what batch `b` leaves there against the
 * kernel's (CHECK). Adds the objects compared to *objects. */
int ng_ruleset_check_batch(struct ng_nl *nl, const struct ng_policy *p, const struct ng_batch *b,
			   const char *table, uint8_t family, size_t *objects, struct ng_err *err);

/* CHECK of what `fn` renders for `p` (a replace form), against the kernel's
 * table `table` in each of `families`. *objects: the objects compared. */
int ng_ruleset_check_rendered(struct ng_nl *nl, const struct ng_policy *p, const char *table, ng_render_fn fn,
			      const uint8_t *families, size_t n_families, size_t *objects,
			      struct ng_err *err);

/* One transaction replacing `table` with the policy. Retried once, with a
 * freshly numbered batch, when replies were lost (the batch is idempotent). */
int ng_ruleset_apply(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err);

/* A running pod's tables (the agent's repair or re-plan): one transaction
 * that replaces them whether or not they are there, never an exclusive
 * create first (a refused transaction costs the kernel an RCU grace
 * period). Only when they are this attachment's (or missing): another's
 * is refused (code 112, as ADD refuses it). */
int ng_ruleset_replace(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err);

/* The comment of table `table` of `family` into `comment`: 0, -ENOENT
 * when the table is not there, -1 with err. */
int ng_ruleset_table_comment(struct ng_nl *nl, const char *table, uint8_t family, char *comment, size_t len,
			     struct ng_err *err);

/* Whose are the pod's tables? 1: attachment (container_id, ifname)'s, or
 * of no recorded attachment; 0: another's (its comment in `owner`);
 * -ENOENT: no table; -1 with err. */
int ng_ruleset_owner(struct ng_nl *nl, const char *table, const char *container_id, const char *ifname,
		     char *owner, size_t len, struct ng_err *err);

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
