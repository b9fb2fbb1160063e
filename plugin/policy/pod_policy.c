#include "policy/pod_policy.h"

#include <string.h>

#include "policy/podcomment.h"

int ng_pod_policy_build(const json_t *entry, const struct ng_config *cfg, const struct ng_prev *prev,
			const struct ng_podref *pod, ng_names_fn resolve, void *ctx,
			struct ng_pod_policy *out, struct ng_err *err)
{
	return ng_pod_policy_build_kept(entry, cfg, prev, pod, NG_KEEP_NONE, resolve, ctx, out, err);
}

int ng_pod_policy_build_kept(const json_t *entry, const struct ng_config *cfg, const struct ng_prev *prev,
			     const struct ng_podref *pod, enum ng_keep keep, ng_names_fn resolve, void *ctx,
			     struct ng_pod_policy *out, struct ng_err *err)
{
	ng_name_list names = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	if (ng_annotations_parse(entry, cfg, &out->ann, err) < 0 ||
	    ng_select_kept(cfg, pod->ns, &out->ann, keep, &out->enforced, &out->audit, out->reason,
			   sizeof(out->reason), err) < 0)
		return NG_POD_REFUSED;
	if (!out->enforced)
		return 0;
	if (resolve) {
		if (ng_policy_names(cfg, &out->ann, &names) < 0) {
			ng_fail(err, NG_E_INTERNAL, "out of memory");
			return NG_POD_ERROR;
		}
		rc = resolve(&names, &out->resolved, ctx, err);
		ng_vec_free(&names);
		if (rc < 0)
			return NG_POD_ERROR;
	}
	if (ng_policy_compile(cfg, &out->ann, prev, resolve ? &out->resolved : NULL, pod, &out->policy, err) <
	    0)
		return NG_POD_REFUSED;
	if (out->audit) { /* the comment says it, so every reader of the table does */
		out->policy.audit = true;
		ng_policy_describe_pod(pod, &out->policy);
	}
	return 0;
}

void ng_pod_policy_free(struct ng_pod_policy *p)
{
	ng_policy_free(&p->policy);
	ng_annotations_free(&p->ann);
	ng_resolved_free(&p->resolved);
	memset(p, 0, sizeof(*p));
}
