/* CHECK: both sides against the pod's policy. */
#include "cni/cni_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cni/hostmirror.h"
#include "kernel/podtables.h"
#include "kernel/ruleset.h"
#include "nft/render.h"
#include "nft/snapshot.h"
#include "spec/cniversion.h"
#include "state/recgrants.h"

/* The grants the agent last applied to the pod (its record follows the
 * API: agent/grants.h, and a live policy change narrows them:
 * agent/livepolicy.h), not the ones the runtime passed at sandbox
 * creation: a warm pod's grants change while it lives; and the mode the
 * record says the pod keeps (a live change never selects a running pod
 * less). No record, or not enforced: the runtime's stdin as it is. */
static int recorded_grants(struct inv *v)
{
	char key[300], path[4600];
	struct ng_record r;
	struct ng_err e = {0};
	int rc = 0;

	if (!v->cfg.state_dir[0] || ng_record_key(v->container_id, v->ifname, key, sizeof(key), &e) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", v->cfg.state_dir, key);
	if (ng_record_read(path, &r, &e) < 0)
		return 0;
	if (!strcmp(r.decision, "enforced") && r.conf &&
	    ng_recgrants_set(v->root, ng_recgrants_get(r.conf)) < 0)
		rc = ng_fail(&v->err, NG_E_INTERNAL, "out of memory");
	if (!strcmp(r.decision, "enforced"))
		v->keep = r.keep;
	ng_record_free(&r);
	return rc;
}

int ng_cmd_check(struct inv *v, FILE *in)
{
	struct ng_snapshot snap = {0};
	struct ng_nl nl;
	bool enforced;
	int rc;

	if (ng_inv_need_env(v, true) < 0 || ng_inv_load(v, in) < 0)
		return ng_inv_fail(v, "error");
	if (ng_version_cmp(v->cfg.cni_version, "0.4.0") < 0) {
		ng_fail(&v->err, NG_E_VERSION, "CHECK needs cniVersion 0.4.0 or later (config says %s)",
			v->cfg.cni_version);
		return ng_inv_fail(v, "error");
	}
	if (ng_inv_load_prev(v) < 0)
		return ng_inv_fail(v, "refused");
	if (recorded_grants(v) < 0)
		return ng_inv_fail(v, "error");
	if ((rc = ng_inv_decide(v, NULL)) != 0)
		return rc;
	enforced = v->pod.enforced;
	if (ng_hostmirror_table(v->container_id, v->ifname, v->host_table, sizeof(v->host_table), &v->err) <
	    0)
		return ng_inv_fail(v, "error");
	if (ng_inv_open_pod_socket(v, &nl, enforced) < 0)
		return ng_inv_fail(v, "error");
	if (enforced) {
		rc = ng_ruleset_check(&nl, &v->pod.policy, NG_TABLE, NULL, &v->err);
		if (rc == 0)
			rc = ng_ruleset_check_answers(&nl, &v->pod.policy, NG_TABLE, &v->err);
		if (rc == 0 && v->pod.policy.host)
			rc = ng_podtables_check_host(NULL, &v->pod.policy, v->host_table, &v->err);
		/* The tables hold the recorded link facts; the link itself no
		 * longer shows them. */
		if (rc == 0 && v->link_drift[0])
			rc = ng_fail(&v->err, NG_E_CHECK, "the pod's link is not as ADD recorded it: %s",
				     v->link_drift);
	} else {
		rc = ng_ruleset_snapshot(&nl, NG_TABLE, &snap, &v->err);
		if (rc == 0)
			rc = ng_fail(&v->err, NG_E_CHECK,
				     "table inet %s is present but the pod is not enforced: %s", NG_TABLE,
				     v->pod.reason);
		else if (rc == -ENOENT)
			rc = 0;
		ng_snapshot_free(&snap);
	}
	ng_nl_close(&nl);
	if (rc < 0)
		return ng_inv_fail(v, "differs");
	ng_log_emit(&v->log, "verified", enforced ? "ruleset matches the policy" : v->pod.reason, 0);
	return 0;
}
