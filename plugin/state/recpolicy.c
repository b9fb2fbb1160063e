#include "state/recpolicy.h"

#include <string.h>
#include <time.h>

int ng_recpolicy_build(const struct ng_record *r, ng_names_fn resolve, void *ctx, struct ng_recpolicy *out,
		       struct ng_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!r->conf)
		return ng_fail(err, NG_E_DECODE, "the record holds no configuration");
	if (!r->have_link)
		return ng_fail(err, NG_E_DECODE,
			       "the record holds no link facts (written by an older plugin?)");
	if (ng_config_parse(r->conf, &out->cfg, err) < 0 ||
	    ng_prev_parse(json_object_get(r->conf, "prevResult"), &out->prev, err) < 0)
		return -1;
	if (ng_pod_policy_build_kept(r->conf, &out->cfg, &out->prev, &r->pod, r->keep,
				     out->cfg.learn ? NULL : resolve, ctx, &out->pp, err) < 0)
		return -1;
	if (!out->pp.enforced)
		return ng_fail(err, NG_E_CONFIG, "the recorded configuration no longer enforces the pod: %s",
			       out->pp.reason);
	out->pp.policy.names_at = time(NULL);
	return ng_policy_link(&out->pp.policy, &r->link, out->cfg.host_mirror != NG_HOST_OFF, err);
}

void ng_recpolicy_free(struct ng_recpolicy *rp)
{
	ng_pod_policy_free(&rp->pp);
	ng_prev_free(&rp->prev);
	ng_config_free(&rp->cfg);
	memset(rp, 0, sizeof(*rp));
}

int ng_record_policy(const struct ng_record *r, struct ng_policy *pol, struct ng_err *err)
{
	struct ng_recpolicy rp;
	int rc = ng_recpolicy_build(r, NULL, NULL, &rp, err);

	memset(pol, 0, sizeof(*pol));
	if (rc == 0) {
		*pol = rp.pp.policy; /* handed over */
		memset(&rp.pp.policy, 0, sizeof(rp.pp.policy));
	}
	ng_recpolicy_free(&rp);
	return rc;
}
