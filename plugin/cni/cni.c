/* The CNI entry point: CNI_COMMAND to its verb; STATUS, GC and VERSION,
 * which change no pod, are here; ADD, DEL and CHECK have files of their
 * own. */
#include "cni/cni.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

#include "base/json_util.h"
#include "cni/cni_add.h"
#include "cni/cni_check.h"
#include "cni/cni_del.h"
#include "cni/hostmirror.h"
#include "cni/inv.h"
#include "spec/cniversion.h"
#include "state/handoff.h"
#include "state/ready.h"

/* Can a pod on this network need learned names (a name or wildcard in
 * egress.allow, or one a grant could name inside egress.envelope)? */
static bool needs_agent(const struct ng_config *cfg)
{
	const ng_dest_vec *lists[2] = {&cfg->allow, &cfg->envelope};

	if (!cfg->learn)
		return false;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			if (lists[l]->v[i].kind != NG_HOST_PREFIX)
				return true;
	return false;
}

static int cmd_status_gc(struct inv *v, FILE *in)
{
	bool gc = strcmp(v->verb, "GC") == 0;

	/* STATUS: ready when the config is valid and, where names are learned,
	 * the agent serves. GC: the pod's tables live and die with its
	 * namespace; the host-side tables do not, and go when their attachment
	 * is not in cni.dev/valid-attachments. */
	if (ng_inv_load(v, in) < 0)
		return ng_inv_fail(v, "error");
	if (!gc && needs_agent(&v->cfg) && ng_agent_serving(v->cfg.state_dir) != 1) {
		ng_fail(&v->err, NG_E_PLUGIN_UNAVAILABLE,
			"egress.names is \"learn\" and no boxxkite-netguard agent serves stateDir %s: "
			"answers to pods are dropped until it runs",
			v->cfg.state_dir);
		return ng_inv_fail(v, "not ready");
	}
	if (gc && ng_hostmirror_gc(v->root, v->cfg.name, &v->log, &v->err) < 0)
		return ng_inv_fail(v, "error");
	ng_log_emit(&v->log, gc ? "collected" : "ready",
		    gc ? "host-side tables of invalid attachments removed" : "configuration valid", 0);
	return 0;
}

static int cmd_version(struct inv *v, FILE *in)
{
	json_t *o = json_object(), *list = json_array(), *root = NULL;
	const char *want = NULL;
	json_error_t je;

	/* VERSION's stdin carries {"cniVersion": ...} and may be empty. */
	root = json_loadf(in, JSON_DISABLE_EOF_CHECK, &je);
	if (root)
		want = ng_json_str(root, "cniVersion");
	for (int i = 0; ng_supported_versions[i]; i++)
		json_array_append_new(list, json_string(ng_supported_versions[i]));
	json_object_set_new(o, "cniVersion",
			    json_string(want && ng_version_supported(want) ? want : NG_CNI_VERSION_LATEST));
	json_object_set_new(o, "supportedVersions", list);
	ng_inv_print_json(v->out, o);
	json_decref(o);
	json_decref(root);
	return 0;
}

/* stateDir's hand-off to the agent and `status` (state/handoff.h): ADD's
 * record with its decision; an enforced pod's with the tables that
 * enforce it. */
static void hand_off(struct inv *v)
{
	bool add = !strcmp(v->verb, "ADD");
	struct ng_handoff h = {
		.state_dir = v->cfg.state_dir,
		.root = v->root,
		.verb = v->verb,
		.log = &v->log,
		.record = add ? &v->record : NULL,
	};
	struct ng_err e = {0};

	if (add && v->container_id && v->ifname &&
	    ng_record_key(v->container_id, v->ifname, v->record.key, sizeof(v->record.key), &e) < 0)
		h.record = NULL; /* no pod to name */
	if (add && h.record && !strcmp(v->log.decision, "enforced")) {
		v->record.learn = v->pod.policy.learn;
		if (!v->record.conf)
			v->record.conf = json_incref(v->root);
		if (ng_record_tables(&v->pod.policy, v->host_table, &v->record.tables) < 0)
			h.record = NULL;
	}
	ng_handoff(&h);
}

int ng_cni_main(FILE *in, FILE *out)
{
	struct inv v;
	const char *cmd = ng_inv_env("CNI_COMMAND");
	int rc;

	ng_inv_begin(&v, cmd ? cmd : "", out);

	if (!cmd) {
		ng_fail(&v.err, NG_E_ENV, "CNI_COMMAND is not set");
		rc = ng_inv_fail(&v, "error");
	} else if (!strcmp(cmd, "ADD")) {
		rc = ng_cmd_add(&v, in);
	} else if (!strcmp(cmd, "DEL")) {
		rc = ng_cmd_del(&v, in);
	} else if (!strcmp(cmd, "CHECK")) {
		rc = ng_cmd_check(&v, in);
	} else if (!strcmp(cmd, "STATUS") || !strcmp(cmd, "GC")) {
		rc = cmd_status_gc(&v, in);
	} else if (!strcmp(cmd, "VERSION")) {
		rc = cmd_version(&v, in);
	} else {
		ng_fail(&v.err, NG_E_ENV,
			"CNI_COMMAND \"%.32s\" is not a CNI verb (ADD, DEL, CHECK, GC, STATUS, VERSION)",
			cmd);
		rc = ng_inv_fail(&v, "error");
	}

	hand_off(&v);
	ng_inv_end(&v);
	return rc;
}
