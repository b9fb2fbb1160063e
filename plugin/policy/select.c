#include "policy/select.h"

#include <stdio.h>
#include <string.h>

int ng_select(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
	      bool *enforced, bool *audit, char *reason, size_t reason_len, struct ng_err *err)
{
	const char *ns = pod_namespace && *pod_namespace ? pod_namespace : NULL;

	*enforced = false;
	*audit = false;
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
	/* After the opt-in: a pod that asks to be enforced is never audited. */
	for (size_t i = 0; ns && i < cfg->audit_namespaces.n; i++) {
		if (strcmp(cfg->audit_namespaces.v[i], ns) == 0) {
			*enforced = true;
			*audit = true;
			snprintf(reason, reason_len,
				 "namespace %s is in enforce.auditNamespaces: AUDIT, not enforcing (what the "
				 "policy refuses is logged as would_deny and let through; cloud metadata is "
				 "refused)",
				 ns);
			return 0;
		}
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

int ng_select_kept(const struct ng_config *cfg, const char *pod_namespace, const struct ng_annotations *ann,
		   enum ng_keep keep, bool *enforced, bool *audit, char *reason, size_t reason_len,
		   struct ng_err *err)
{
	char would[512];
	enum ng_keep got;
	struct ng_err e2 = {0};

	if (keep == NG_KEEP_NONE)
		return ng_select(cfg, pod_namespace, ann, enforced, audit, reason, reason_len, err);
	if (ng_select(cfg, pod_namespace, ann, enforced, audit, would, sizeof(would), &e2) < 0) {
		*enforced = *audit = false;
		snprintf(would, sizeof(would), "%s", e2.msg);
	}
	got = !*enforced ? NG_KEEP_NONE : *audit ? NG_KEEP_AUDIT : NG_KEEP_ENFORCE;
	if (got >= keep) {
		snprintf(reason, reason_len, "%s", would);
		return 0;
	}
	/* Never less than it runs with: kept, and the reason says why. */
	*enforced = true;
	*audit = keep == NG_KEEP_AUDIT;
	snprintf(reason, reason_len,
		 "kept %s until its DEL (a running pod is never selected less); the active entry would %s: "
		 "%.300s",
		 keep == NG_KEEP_AUDIT ? "in AUDIT" : "enforced",
		 got == NG_KEEP_AUDIT ? "only audit it" : "not select it", would);
	return 0;
}
