/* The grant annotation (netguard.boxxkite.io/egress) of a pod as its
 * record holds it: ADD's stdin, runtimeConfig's pod annotations. The agent
 * rewrites it when the API's changes (agent/grants.h); CHECK and a
 * restarted agent read it from there, so both use the pod's current
 * grants, not the ones the runtime passed at sandbox creation. Pure. */
#ifndef NG_RECGRANTS_H
#define NG_RECGRANTS_H

#include <jansson.h>

#define NG_CRI_ANNOTATIONS "io.kubernetes.cri.pod-annotations"

/* The grant annotation of a recorded ADD stdin: its value, NULL when the
 * pod has none. */
const char *ng_recgrants_get(const json_t *conf);

/* Sets `conf`'s grant annotation to `egress` (NULL: removed), in place.
 * 0, or -1 out of memory. */
int ng_recgrants_set(json_t *conf, const char *egress);

/* A deep copy of `conf` whose grant annotation is `egress` (NULL: the
 * annotation removed); NULL out of memory. */
json_t *ng_recgrants_with(const json_t *conf, const char *egress);

#endif
