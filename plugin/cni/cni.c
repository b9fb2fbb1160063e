#include "cni/cni.h"

#include "cni/inv.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
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

const char *ng_inv_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* ---- output --------------------------------------------------------------- */

static const char *out_version(const struct inv *v)
{
	return ng_version_supported(v->cfg.cni_version) ? v->cfg.cni_version : NG_CNI_VERSION_LATEST;
}

static void print_json(FILE *out, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	if (s) {
		fputs(s, out);
		fputc('\n', out);
		free(s);
	}
	fflush(out);
}

/* The spec's error object on stdout; the exit status is non-zero. */
int ng_inv_fail(struct inv *v, const char *decision)
{
	json_t *e = json_object();

	json_object_set_new(e, "cniVersion", json_string(out_version(v)));
	json_object_set_new(e, "code", json_integer(v->err.code ? v->err.code : NG_E_INTERNAL));
	json_object_set_new(e, "msg", json_string(v->err.msg));
	if (v->err.details[0])
		json_object_set_new(e, "details", json_string(v->err.details));
	print_json(v->out, e);
	json_decref(e);
	ng_log_emit(&v->log, decision, v->err.msg, v->err.code);
	return 1;
}

/* ---- input ---------------------------------------------------------------- */

static int read_stdin(FILE *in, json_t **root, struct ng_err *err)
{
	char *buf = malloc(NG_STDIN_MAX + 1);
	size_t len = 0, n;
	json_error_t je;

	if (!buf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	while (len <= NG_STDIN_MAX && (n = fread(buf + len, 1, NG_STDIN_MAX + 1 - len, in)) > 0)
		len += n;
	if (len > NG_STDIN_MAX) {
		free(buf);
		return ng_fail(err, NG_E_DECODE, "network configuration on stdin is larger than %zu bytes",
			       NG_STDIN_MAX);
	}
	/* Duplicate keys are refused: two parsers reading {"egress":A,"egress":B}
	 * differently is how a reviewed config ends up meaning something else. */
	*root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	free(buf);
	if (!*root)
		return ng_fail(err, NG_E_DECODE,
			       "network configuration is not valid JSON: %s (line %d, column %d)", je.text,
			       je.line, je.column);
	if (!json_is_object(*root)) {
		json_decref(*root);
		*root = NULL;
		return ng_fail(err, NG_E_DECODE, "network configuration must be a JSON object");
	}
	return 0;
}

int ng_inv_need_env(struct inv *v, bool netns)
{
	v->container_id = ng_inv_env("CNI_CONTAINERID");
	v->netns_path = ng_inv_env("CNI_NETNS");
	v->ifname = ng_inv_env("CNI_IFNAME");
	v->log.container_id = v->container_id;
	v->log.netns = v->netns_path;
	if (!v->container_id)
		return ng_fail(&v->err, NG_E_ENV, "CNI_CONTAINERID is required for %s", v->verb);
	if (!v->ifname)
		return ng_fail(&v->err, NG_E_ENV, "CNI_IFNAME is required for %s", v->verb);
	/* The kernel's rule for interface names (dev_valid_name): the netdev
	 * guard chain is bound to this device by name. DEL does not use it. */
	if (netns && (!*v->ifname || strlen(v->ifname) >= 16 || !strcmp(v->ifname, ".") ||
		      !strcmp(v->ifname, "..") || strpbrk(v->ifname, "/: \t\n\r\v\f")))
		return ng_fail(&v->err, NG_E_ENV, "CNI_IFNAME \"%.40s\" is not a valid interface name",
			       v->ifname);
	if (netns && !v->netns_path)
		return ng_fail(&v->err, NG_E_ENV, "CNI_NETNS is required for %s", v->verb);
	return 0;
}

/* stdin, config, CNI_ARGS: the common front of every verb but VERSION. */
int ng_inv_load(struct inv *v, FILE *in)
{
	const char *log_file;

	if (read_stdin(in, &v->root, &v->err) < 0)
		return -1;
	/* Who and where to log first, so that a refused config is logged to
	 * logFile with the pod it refused. */
	log_file = ng_json_str(v->root, "logFile");
	if (log_file && log_file[0] == '/')
		v->log.log_file = log_file;
	if (ng_cni_args_parse(getenv("CNI_ARGS"), &v->args, &v->err) < 0)
		return -1;
	v->log.pod_namespace = v->args.pod_namespace;
	v->log.pod_name = v->args.pod_name;
	if (ng_config_parse(v->root, &v->cfg, &v->err) < 0)
		return -1;
	v->log.log_file = v->cfg.log_file;
	return 0;
}

int ng_inv_load_prev(struct inv *v)
{
	const json_t *prev = json_object_get(v->root, "prevResult");

	if (!prev || json_is_null(prev))
		return ng_fail(&v->err, NG_E_CONFIG,
			       "prevResult is required: boxxkite-netguard is a chained plugin and must "
			       "follow the primary CNI plugin in the conflist");
	return ng_prev_parse(prev, &v->prev, &v->err);
}

struct ng_pod_id ng_inv_pod_id(const struct inv *v)
{
	struct ng_pod_id id = {v->args.pod_namespace, v->args.pod_name, v->container_id, v->ifname};

	return id;
}

/* ng_netns_open, its errors naming where the path came from (the node-side
 * commands name their --netns/--pid instead). */
int ng_inv_open_netns(struct inv *v, int *fd, enum ng_netns_status *st)
{
	if (ng_netns_open(v->netns_path, fd, st, &v->err) < 0) {
		ng_err_prefix(&v->err, "CNI_NETNS ");
		return -1;
	}
	return 0;
}

/* A netfilter socket in the pod's namespace, which must exist (ADD, CHECK;
 * DEL has its own rules for a namespace that is gone), and so must the
 * interface the packet-socket guard hooks. With `plan`, the pod's link is
 * read there first and both sides planned (hostMirror). */
int ng_inv_open_pod_socket(struct inv *v, struct ng_nl *nl, bool plan)
{
	enum ng_netns_status st;
	int fd, rc = 0;

	if (ng_inv_open_netns(v, &fd, &st) < 0)
		return -1;
	if (st == NG_NETNS_GONE)
		return ng_fail(&v->err, NG_E_NETNS, "CNI_NETNS %s is not a network namespace", v->netns_path);
	if (plan)
		rc = ng_hostmirror_plan(&v->cfg, fd, v->ifname, json_object_get(v->root, "prevResult"),
					&v->pod.policy, &v->log, &v->err);
	if (rc == 0)
		rc = ng_nl_open_netns(fd, v->pod.policy.raw_guard ? v->pod.policy.ifname : NULL, nl, &v->err);
	close(fd);
	return rc;
}

/* ---- the agent's state record ---------------------------------------------- */

/* The host-side table, in the node's namespace, when the pod has one: the
 * agent writes what it learns there too, and the drift watch reads it. */
int ng_inv_push_host_table(const struct inv *v, ng_record_table_vec *tables)
{
	struct ng_record_table t = {.in_node = true, .family = NFPROTO_NETDEV};

	if (!v->pod.policy.host)
		return 0;
	snprintf(t.name, sizeof(t.name), "%s", v->host_table);
	return ng_vec_push(tables, &t);
}

/* ---- verbs ---------------------------------------------------------------- */

int ng_inv_print_prev(struct inv *v)
{
	json_t *res = ng_prev_convert(json_object_get(v->root, "prevResult"), v->cfg.cni_version, &v->err);

	if (!res)
		return -1;
	print_json(v->out, res);
	json_decref(res);
	return 0;
}

/* The pod's decision and policy (policy/pod_policy.h), the same for ADD,
 * CHECK and verify; logs refusals and errors under their own word. */
int ng_inv_decide(struct inv *v, ng_names_fn resolve)
{
	struct ng_pod_id pod = ng_inv_pod_id(v);
	int rc = ng_pod_policy_build(v->root, &v->cfg, &v->prev, &pod, resolve, NULL, &v->pod, &v->err);

	if (rc == NG_POD_ERROR)
		return ng_inv_fail(v, "error");
	if (rc < 0)
		return ng_inv_fail(v, "refused");
	return 0;
}

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
	print_json(v->out, o);
	json_decref(o);
	json_decref(root);
	return 0;
}

/* stateDir's hand-off to the agent's metrics and `status` (cni/handoff.h):
 * the tables that enforce the pod are the record's, or, when the agent
 * keeps no record of the pod, those ADD built. */
static void hand_off(struct inv *v)
{
	struct ng_record_table t = {.family = NFPROTO_INET, .name = NG_TABLE};
	bool enforced = !strcmp(v->verb, "ADD") && !strcmp(v->log.decision, "enforced");
	struct ng_handoff h = {
		.state_dir = v->cfg.state_dir,
		.root = v->root,
		.verb = v->verb,
		.container_id = v->container_id,
		.ifname = v->ifname,
		.netns = v->netns_path,
		.pod_namespace = v->args.pod_namespace,
		.pod_name = v->args.pod_name,
		.log = &v->log,
		.conf = enforced ? v->root : NULL,
		.tables = &v->record.tables,
		.learn = v->pod.policy.learn,
	};

	if (enforced && !v->recorded) {
		ng_vec_free(&v->record.tables);
		if (ng_vec_push(&v->record.tables, &t) < 0)
			return;
		t.family = NFPROTO_NETDEV;
		if (v->pod.policy.raw_guard && ng_vec_push(&v->record.tables, &t) < 0)
			return;
		if (ng_inv_push_host_table(v, &v->record.tables) < 0)
			return;
	}
	ng_handoff(&h);
}

int ng_cni_main(FILE *in, FILE *out)
{
	struct inv v;
	const char *cmd = ng_inv_env("CNI_COMMAND");
	int rc;

	memset(&v, 0, sizeof(v));
	v.out = out;
	v.verb = cmd ? cmd : "";
	ng_log_begin(&v.log, v.verb);

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
	ng_vec_free(&v.record.tables);
	ng_pod_policy_free(&v.pod);
	ng_prev_free(&v.prev);
	ng_config_free(&v.cfg);
	json_decref(v.root);
	return rc;
}
