/* Pod annotations under netguard.boxxkite.io/, read from
 * runtimeConfig["io.kubernetes.cri.pod-annotations"] (containerd and CRI-O
 * pass the pod's annotations there when the plugin entry declares the
 * capability). Annotations can select a pod or narrow-grant destinations
 * inside egress.envelope; they can never widen past the platform. */
#ifndef NG_ANNOTATIONS_H
#define NG_ANNOTATIONS_H

#include <jansson.h>

#include "policy/config.h"
#include "policy/dest.h"
#include "base/err.h"

#define NG_ANN_PREFIX     "netguard.boxxkite.io/"
#define NG_ANN_ENFORCE    NG_ANN_PREFIX "enforce"
#define NG_ANN_EGRESS     NG_ANN_PREFIX "egress"
#define NG_ANN_VALUE_MAX  16384 /* bytes in one annotation value */
#define NG_ANN_GRANTS_MAX 256   /* entries in netguard.boxxkite.io/egress */

struct ng_annotations {
	bool passed; /* the runtime passed pod annotations at all */
	int enforce; /* -1 absent, 0 "false", 1 "true" */
	ng_dest_vec grants;
};

/* Parses and validates every netguard.boxxkite.io/ annotation, whether or
 * not the pod ends up enforced: a typo in a key is exactly what would leave
 * a pod unprotected without a sound. Codes: 101 for unknown keys and
 * malformed values, 100 for a grant outside egress.envelope. */
int ng_annotations_parse(const json_t *root, const struct ng_config *cfg, struct ng_annotations *out,
			 struct ng_err *err);
void ng_annotations_free(struct ng_annotations *a);

/* Live policy (agent/livepolicy.h): which entries of a running pod's grant
 * annotation `value` (as its record holds it) the new plugin entry `cfg`
 * still admits, each checked exactly as ADD checks it. Those, as written,
 * into *kept (comma-joined; NULL when none is left; free() it); the others
 * into `dropped` as "<entry> (<why>)" (free() each). Narrower, never
 * wider: nothing is added or rewritten. 0, or -1 out of memory. */
int ng_annotations_narrow(const char *value, const struct ng_config *cfg, char **kept, ng_str_vec *dropped);

#endif
