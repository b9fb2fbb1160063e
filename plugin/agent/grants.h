/* Per-session grants and what Kubernetes sees of the protection, on the
 * ops thread (agent/ops.h), from the API's view of the node's pods
 * (agent/kube.h):
 *
 *   - an enforced pod whose netguard.boxxkite.io/egress annotation in the
 *     API differs from the one its record holds is re-planned exactly as
 *     ADD would plan it (agent/grantplan.h: the recorded ADD stdin with
 *     the new annotation, through state/recpolicy.h); refused (outside
 *     the envelope, malformed): it keeps its grants, the log and an Event
 *     say why, and the same value is not tried again; accepted: both
 *     sides applied (one transaction per namespace), the record rewritten
 *     (a restarted agent and CHECK use it; a new nonce, so the learner
 *     takes the pod on afresh with the new names), and every live flow
 *     to a withdrawn grant cut (conntrack);
 *   - a pod whose annotations the API cannot give as strings keeps what
 *     it has;
 *   - Events: NetguardEnforced (both sides verified), NetguardRefused (an
 *     ADD refused), NetguardGrantsUpdated, NetguardGrantRefused,
 *     NetguardDrift, NetguardRepaired;
 *   - the condition netguard.boxxkite.io/enforced: True once a CHECK of
 *     both sides passed, False while the pod differs from its policy
 *     (also for a drift the repair undid at once) or its grants are being
 *     changed.
 * Without a Kubernetes API (kube NULL) nothing of this runs. */
#ifndef NG_AGENT_GRANTS_H
#define NG_AGENT_GRANTS_H

#include <stddef.h>
#include <stdio.h>

#include "agent/kube.h"
#include "agent/opspod.h"

struct ng_grants;

struct ng_grants *ng_grants_new(struct ng_kube *kube);
void ng_grants_free(struct ng_grants *g);

/* The fd to poll for the API's changes (-1: none). */
int ng_grants_fd(const struct ng_grants *g);
/* One pass over the ops thread's pods: re-plans, events, conditions. */
void ng_grants_run(struct ng_grants *g, struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env);

/* A CHECK found pod `p`'s tables not as recorded (`diff`), before any
 * repair (agent/opspod.h's drift_seen): its condition goes False now
 * (reason Drift), True again only once a CHECK passes (ng_grants_run), so
 * a repair that is over within milliseconds still shows in the API. */
void ng_grants_unverified(struct ng_grants *g, const struct ng_opod *p, const char *diff);

/* /metrics lines (any thread). */
void ng_grants_metrics(struct ng_grants *g, FILE *out);

#endif
