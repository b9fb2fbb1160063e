/* DEL (best effort, repeatable: success whenever nothing is left to
 * remove) and CHECK (both sides against the policy). */
#include "cni/inv.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/annotations.h"
#include "cni/cni_args.h"
#include "cni/cniversion.h"
#include "policy/config.h"
#include "base/err.h"
#include "base/json_util.h"
#include "base/kernelver.h"
#include "base/decision_log.h"
#include "kernel/neighpin.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "policy/pod_policy.h"
#include "policy/policy.h"
#include "cni/prevresult.h"
#include "nft/render.h"
#include "kernel/resolve.h"
#include "kernel/ruleset.h"
#include "cni/hostmirror.h"
#include "policy/select.h"
#include "base/version.h"
#include "cni/podrecord.h"
#include "cni/handoff.h"

#include <linux/netfilter.h>
#include <sys/stat.h>

/* DEL: the agent's record goes first, whatever else is left, and the agent
 * gets a moment to close the pod's sockets (they would keep its namespace,
 * veth and address alive). */
static int forget_pod(struct inv *v)
{
	char key[256];
	struct ng_err e = {0};

	if (ng_record_key(v->container_id, v->ifname, key, sizeof(key), &e) < 0)
		return 0; /* no ADD could have recorded such a pod */
	return ng_record_remove(v->cfg.state_dir, key, NG_AGENT_RELEASE_MS, &v->err);
}

/* The decision record first (cni/handoff.h): the drift watch must not
 * take this DEL's table removal for tampering. */
static void forget_decision(struct inv *v)
{
	struct ng_handoff h = {.state_dir = v->cfg.state_dir,
			       .root = v->root,
			       .container_id = v->container_id,
			       .ifname = v->ifname};

	ng_handoff_forget(&h);
}

int ng_cmd_del(struct inv *v, FILE *in)
{
	const char *what = "";

	if (ng_inv_need_env(v, false) < 0)
		return ng_inv_fail(v, "error");
	/* DEL must work when the config has since become invalid: the tables
	 * are removed either way, and the problem is logged, not returned. */
	if (ng_inv_load(v, in) < 0) {
		ng_log_set(&v->log, "config_error", json_string(v->err.msg));
		memset(&v->err, 0, sizeof(v->err));
		forget_decision(v);
	} else if (forget_decision(v), forget_pod(v) < 0) {
		/* Never a stuck pod for it: the agent also drops a pod whose
		 * namespace is gone. */
		ng_log_set(&v->log, "state_error", json_string(v->err.msg));
		memset(&v->err, 0, sizeof(v->err));
	}
	/* The host side by name, whatever the config says now and whether or
	 * not the namespace and prevResult are still there (containerd's
	 * second DEL has neither). */
	if (ng_hostmirror_table(v->container_id, v->ifname, v->host_table, sizeof(v->host_table), &v->err) <
		    0 ||
	    ng_hostmirror_del(v->netns_path, v->container_id, v->ifname, v->host_table, &v->log, &what,
			      &v->err) < 0)
		return ng_inv_fail(v, "error");
	ng_log_emit(&v->log, "deleted", what, 0);
	return 0;
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
			rc = ng_hostmirror_check(&v->pod.policy, v->host_table, &v->err);
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
