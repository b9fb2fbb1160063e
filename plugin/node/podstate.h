/* One pod as the node sees it, from its record and the kernel: the
 * recorded policy (state/recpolicy.h), a netfilter socket in its namespace (the recorded
 * namespace, checked by inode: a reused path is not the pod's), the deny
 * counters of every table that enforces it, its learned elements, and a
 * CHECK. Used by the agent's ops thread (metrics, drift watch) and by
 * `boxxkite-netguard status` when no agent publishes its view. */
#ifndef NG_PODSTATE_H
#define NG_PODSTATE_H

#include <stddef.h>

#include "base/err.h"
#include "state/record.h"
#include "kernel/nl.h"
#include "node/nodeview.h"
#include "policy/policy.h"
#include "state/recpolicy.h"

/* The pod's policy rebuilt for a repair (state/recpolicy.h): the record's
 * stdin and link facts; an egress.names "resolve" pod's names resolved
 * again by the node, as ADD did. `rp` is freed with ng_recpolicy_free
 * either way. The caller applies it (agent/podlock.h: with what the agent
 * learned, under the pod's commit lock). */
int ng_podstate_rebuild(const struct ng_record *r, struct ng_recpolicy *rp, struct ng_err *err);

/* The pod's link as it is now (kernel/peer.h), in its recorded
 * namespace: what a CHECK compares with the recorded facts. 0; 1 when the
 * namespace is gone or another one now; -1 with err. */
int ng_podstate_link(const struct ng_record *r, struct ng_link_facts *live, struct ng_err *err);

/* A socket inside the pod's recorded namespace. 0; 1 when the namespace
 * is gone or is another one now; -1 with err. */
int ng_podstate_open(const struct ng_record *r, struct ng_nl *nl, struct ng_err *err);

/* The record's fields into the view (decision, reason, names...). */
void ng_podstate_from_record(const struct ng_record *r, struct ng_view_pod *v);

/* Counters of every table (pod side through `nl`, node side through
 * `node_nl`, which may be NULL), which tables are there, learned elements
 * and per-name counts. Fills v->read_ok / v->read_error. */
void ng_podstate_read(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_record *d,
		      const struct ng_policy *pol, struct ng_view_pod *v);

/* CHECK of every table: the pod's inet (+ netdev guard) compared with what
 * the policy renders to (ng_ruleset_check), node-side tables present. 0 in
 * sync, 1 differs (diff says how, in one line), -1 could not tell. */
int ng_podstate_check(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_record *d,
		      const struct ng_policy *pol, char *diff, size_t len);

#endif
