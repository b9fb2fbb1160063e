/* DEL: best effort and repeatable, success whenever nothing is left to
 * remove (containerd's second DEL has neither the namespace nor
 * prevResult). */
#include "cni/cni_del.h"

#include <string.h>

#include "cni/hostmirror.h"
#include "state/handoff.h"
#include "state/ready.h"
#include "state/record.h"

/* The pod's record goes first, whatever else is left: the drift watch must
 * not take this DEL's table removal for tampering, and the agent gets a
 * moment to close the pod's sockets (they would keep its namespace, veth
 * and address alive). */
static int forget_pod(struct inv *v)
{
	struct ng_handoff h = {.state_dir = v->cfg.state_dir, .root = v->root};
	char key[256];
	struct ng_err e = {0};

	if (ng_record_key(v->container_id, v->ifname, key, sizeof(key), &e) < 0)
		return 0; /* no ADD could have recorded such a pod */
	return ng_record_remove(ng_handoff_state_dir(&h), key, NG_AGENT_RELEASE_MS, &v->err);
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
	}
	if (forget_pod(v) < 0) {
		/* Never a stuck pod for it: the agent also drops a pod whose
		 * namespace is gone. */
		ng_log_set(&v->log, "state_error", json_string(v->err.msg));
		memset(&v->err, 0, sizeof(v->err));
	}
	/* The host side by name, whatever the config says now and whether or
	 * not the namespace and prevResult are still there. */
	if (ng_hostmirror_table(v->container_id, v->ifname, v->host_table, sizeof(v->host_table), &v->err) <
		    0 ||
	    ng_hostmirror_del(v->netns_path, v->container_id, v->ifname, v->host_table, &v->log, &what,
			      &v->err) < 0)
		return ng_inv_fail(v, "error");
	ng_log_emit(&v->log, "deleted", what, 0);
	return 0;
}
