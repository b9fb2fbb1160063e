#include "policy/select.h"

#include <stdio.h>
#include <string.h>

int ng_select(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
	      bool *enforced, char *reason, size_t reason_len, struct ng_err *err)
{
	const char *ns = pod_namespace && *pod_namespace ? pod_namespace : NULL;

	*enforced = false;
	for (size_t i = 0; ns && i < cfg->namespaces.n; i++) {
		if (strcmp(cfg->namespaces.v[i], ns) == 0) {
			*enforced = true;
			snprintf(reason, reason_len, "namespace %s is in enforce.namespaces%s", ns,
				 ann->enforce == 0 ? " (the opt-out annotation is ignored there)" : "");
			return 0;
		}
	}
	if (ann->enforce == 1) {
		if (!cfg->opt_in)
			return ng_fail(err, NG_E_OPT_IN,
				       "pod asks for enforcement (%s: \"true\") but this node's config does "
				       "not allow opt-in (enforce.optInAnnotation is false); refusing to "
				       "start it unprotected",
				       NG_ANN_ENFORCE);
		*enforced = true;
		snprintf(reason, reason_len, "opted in by annotation %s", NG_ANN_ENFORCE);
		return 0;
	}
	if (!ns)
		snprintf(reason, reason_len, "no K8S_POD_NAMESPACE in CNI_ARGS and no opt-in annotation%s",
			 ann->passed ? "" : " (the runtime passed no pod annotations)");
	else
		snprintf(reason, reason_len, "namespace %s is not in enforce.namespaces and the pod %s%s", ns,
			 ann->enforce == 0 ? "opted out" : "has no opt-in annotation",
			 ann->passed || !cfg->opt_in ? "" : " (the runtime passed no pod annotations)");
	return 0;
}
