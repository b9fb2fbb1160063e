/* CNI_ARGS: "K=V;K=V" from the runtime. containerd and CRI-O put the pod's
 * identity here (K8S_POD_NAMESPACE, K8S_POD_NAME, ...) in no fixed order,
 * with IgnoreUnknown=1. Parsed, never compared as a string. */
#ifndef NG_CNI_ARGS_H
#define NG_CNI_ARGS_H

#include <stdbool.h>

#include "base/err.h"

struct ng_cni_args {
	char pod_namespace[64];
	char pod_name[254];
	char pod_uid[64];
	char infra_container_id[128];
	bool ignore_unknown;
};

/* NULL or "" is an empty set of args. Unknown keys fail (code 4) unless
 * IgnoreUnknown is 1/true anywhere in the list, as libcni's own plugins do. */
int ng_cni_args_parse(const char *s, struct ng_cni_args *out, struct ng_err *err);

#endif
