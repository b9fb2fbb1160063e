/* `status --names`: what each learning pod's name entries taught, from the
 * agent's view (node/nodeview.h: taught, taught_names), as one JSON
 * document (what the agent's socket answers, and --json prints) and as a
 * table read back from it. Pure.
 *
 *   {"ts":"...Z","pods":[{"pod_namespace":"ns","pod_name":"web","key":"...","learn":true,
 *     "names":[{"name":"storage.world.test","ports":"tcp/443","addresses":[
 *        {"address":"10.20.1.6","proto":"tcp","ports":"443","tables":["pod","guard","node"],
 *         "podExpires":"...Z","podSecondsLeft":287,"nodeExpires":"...Z","nodeSecondsLeft":287,
 *         "keptAlive":false}]}],
 *     "unnamed":[...rows as above: learned before the agent restarted...],
 *     "notShown":0}]}
 * "tables": "pod" (the pod's inet table), "guard" (its packet-socket guard,
 * which takes the same elements in the same transaction), "node" (its
 * host-side table, which learns only from answers the node saw). */
#ifndef NG_STATUSNAMES_H
#define NG_STATUSNAMES_H

#include <jansson.h>
#include <stdio.h>

#include "node/nodeview.h"

/* The pods of v (only ns/name when ns is not NULL). */
json_t *ng_status_names_json(const struct ng_view *v, const char *ns, const char *name);
/* The document as a table; its pods' count. */
int ng_status_names_table(const json_t *doc, FILE *out);

#endif
