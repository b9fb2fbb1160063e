/* One pod as the node sees it, from its decision record and the kernel:
 * the policy rebuilt exactly as ADD compiled it (the policy layer, from
 * the recorded stdin), a netfilter socket in its namespace (the recorded
 * namespace, checked by inode: a reused path is not the pod's), the deny
 * counters of every table that enforces it, its learned elements, and a
 * CHECK. Used by the agent's ops thread (metrics, drift watch) and by
 * `boxxkite-netguard status` when no agent publishes its view. */
#ifndef NG_PODSTATE_H
#define NG_PODSTATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "cni/decisionrec.h"
#include "kernel/nl.h"
#include "node/nodeview.h"
#include "policy/policy.h"

/* The enforced pod's policy as CHECK compiles it (no DNS asked: the pinned
 * name sets are bounded, not recomputed; nothing in it points into the
 * record's config). 0, or -1 with err. */
int ng_podstate_policy(const struct ng_decision *d, struct ng_policy *pol, struct ng_err *err);
/* The same from ADD's stdin and the pod's identity (the learner's record). */
int ng_podstate_policy_of(const json_t *conf, const struct ng_pod_id *id, struct ng_policy *pol,
			  struct ng_err *err);

/* Re-applies the recorded policy in one transaction (ng_ruleset_apply): an
 * egress.names "resolve" pod's names are resolved again by the node, as ADD
 * did (the elements' comments name them while the config is alive). */
/* `node_nl` (may be NULL: a socket of its own) commits the host side: the
 * drift watch knows its port id, so a repair is not taken for drift. */
int ng_podstate_repair(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_decision *d,
		       struct ng_err *err);

/* A socket inside the pod's recorded namespace. 0; 1 when the namespace
 * is gone or is another one now; -1 with err. */
int ng_podstate_open(const struct ng_decision *d, struct ng_nl *nl, struct ng_err *err);

/* The record's fields into the view (decision, reason, names...). */
void ng_podstate_from_decision(const struct ng_decision *d, struct ng_view_pod *v);

/* Counters of every table (pod side through `nl`, node side through
 * `node_nl`, which may be NULL), which tables are there, learned elements
 * and per-name counts. Fills v->read_ok / v->read_error. */
void ng_podstate_read(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_decision *d,
		      const struct ng_policy *pol, struct ng_view_pod *v);

/* CHECK of every table: the pod's inet (+ netdev guard) compared with what
 * the policy renders to (ng_ruleset_check), node-side tables present. 0 in
 * sync, 1 differs (diff says how, in one line), -1 could not tell. */
int ng_podstate_check(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_decision *d,
		      const struct ng_policy *pol, char *diff, size_t len);

#endif
