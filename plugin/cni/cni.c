#include "cni/cni.h"

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
#include "policy/select.h"
#include "base/version.h"

/* Everything one invocation knows; filled step by step, freed once. */
struct inv {
	const char *verb;
	const char *container_id, *netns_path, *ifname;
	json_t *root;
	struct ng_config cfg;
	struct ng_cni_args args;
	struct ng_prev prev;
	struct ng_pod_policy pod; /* the decision and, when enforced, the policy */
	struct ng_log log;
	struct ng_err err;
	FILE *out;
};

static const char *env(const char *name)
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
static int fail(struct inv *v, const char *decision)
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

static int need_env(struct inv *v, bool netns)
{
	v->container_id = env("CNI_CONTAINERID");
	v->netns_path = env("CNI_NETNS");
	v->ifname = env("CNI_IFNAME");
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
static int load(struct inv *v, FILE *in)
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

static int load_prev(struct inv *v)
{
	const json_t *prev = json_object_get(v->root, "prevResult");

	if (!prev || json_is_null(prev))
		return ng_fail(&v->err, NG_E_CONFIG,
			       "prevResult is required: boxxkite-netguard is a chained plugin and must "
			       "follow the primary CNI plugin in the conflist");
	return ng_prev_parse(prev, &v->prev, &v->err);
}

static struct ng_pod_id pod_id(const struct inv *v)
{
	struct ng_pod_id id = {v->args.pod_namespace, v->args.pod_name, v->container_id, v->ifname};

	return id;
}

/* The packet-socket guard needs the netdev egress hook as it is since
 * 5.17; an older kernel would leave packet sockets open without a word. */
static int guard_kernel(struct inv *v)
{
	struct utsname u = {.release = "(unknown)"};

	if (uname(&u) == 0 && ng_kernel_at_least(u.release, NG_RAW_GUARD_MAJOR, NG_RAW_GUARD_MINOR))
		return 0;
	return ng_fail(&v->err, NG_E_KERNEL,
		       "kernel %s is older than %d.%d: its netdev egress hook does not hold packet sockets "
		       "(rawPacketGuard); upgrade, or drop NET_RAW from sandbox pods and set rawPacketGuard "
		       "to false",
		       u.release, NG_RAW_GUARD_MAJOR, NG_RAW_GUARD_MINOR);
}

/* A netfilter socket in the pod's namespace, which must exist (ADD, CHECK;
 * DEL has its own rules for a namespace that is gone), and so must the
 * interface the packet-socket guard hooks. */
/* ng_netns_open, its errors naming where the path came from (the node-side
 * commands name their --netns/--pid instead). */
static int open_netns(struct inv *v, int *fd, enum ng_netns_status *st)
{
	if (ng_netns_open(v->netns_path, fd, st, &v->err) < 0) {
		ng_err_prefix(&v->err, "CNI_NETNS ");
		return -1;
	}
	return 0;
}

static int open_pod_socket(struct inv *v, struct ng_nl *nl)
{
	enum ng_netns_status st;
	int fd, rc;

	if (open_netns(v, &fd, &st) < 0)
		return -1;
	if (st == NG_NETNS_GONE)
		return ng_fail(&v->err, NG_E_NETNS, "CNI_NETNS %s is not a network namespace", v->netns_path);
	rc = ng_nl_open_netns(fd, v->pod.policy.raw_guard ? v->pod.policy.ifname : NULL, nl, &v->err);
	close(fd);
	return rc;
}

/* Permanent neighbour entries for the gateways the node holds, so that a
 * neighbour poisoning the pod's ARP/ND cannot pose as the node (README
 * "Neighbours"). */
static int pin_gateways(struct inv *v)
{
	enum ng_netns_status st;
	size_t pinned = 0;
	int fd, rc;

	if (ng_netns_open(v->netns_path, &fd, &st, &v->err) < 0)
		return -1;
	rc = ng_neigh_pin_gateways(fd, v->pod.policy.ifname, v->prev.gateways.v, v->prev.gateways.n, &pinned,
				   &v->err);
	close(fd);
	ng_log_set(&v->log, "pinned_gateways", json_integer((json_int_t)pinned));
	return rc;
}

/* ---- verbs ---------------------------------------------------------------- */

static int print_prev(struct inv *v)
{
	json_t *res = ng_prev_convert(json_object_get(v->root, "prevResult"), v->cfg.cni_version, &v->err);

	if (!res)
		return -1;
	print_json(v->out, res);
	json_decref(res);
	return 0;
}

/* ADD resolves the policy's DNS names from the node's namespace (where the
 * plugin runs), within one budget for all of them. */
static int resolve_names(const ng_name_list *names, ng_resolved *out, void *ctx, struct ng_err *err)
{
	(void)ctx;
	return ng_resolve_all(names, ng_resolve_system, NG_RESOLVE_BUDGET_MS, out, err);
}

/* The pod's decision and policy (policy/pod_policy.h), the same for ADD,
 * CHECK and verify; logs refusals and errors under their own word. */
static int decide(struct inv *v, ng_names_fn resolve)
{
	struct ng_pod_id pod = pod_id(v);
	int rc = ng_pod_policy_build(v->root, &v->cfg, &v->prev, &pod, resolve, NULL, &v->pod, &v->err);

	if (rc == NG_POD_ERROR)
		return fail(v, "error");
	if (rc < 0)
		return fail(v, "refused");
	return 0;
}

static int cmd_add(struct inv *v, FILE *in)
{
	int rc;
	struct ng_nl nl;

	if (need_env(v, true) < 0)
		return fail(v, "error");
	if (load(v, in) < 0 || load_prev(v) < 0)
		return fail(v, "refused");
	if ((rc = decide(v, resolve_names)) != 0)
		return rc;
	if (!v->pod.enforced) {
		if (print_prev(v) < 0)
			return fail(v, "error");
		ng_log_emit(&v->log, "skipped", v->pod.reason, 0);
		return 0;
	}
	v->pod.policy.names_at = time(NULL); /* for the pinned name sets' expiry comments */
	if (v->pod.policy.raw_guard && guard_kernel(v) < 0)
		return fail(v, "error");

	if (open_pod_socket(v, &nl) < 0)
		return fail(v, "error");
	rc = ng_ruleset_apply(&nl, &v->pod.policy, NG_TABLE, &v->err);
	ng_nl_close(&nl);
	if (rc < 0 || pin_gateways(v) < 0)
		return fail(v, "error");
	if (print_prev(v) < 0)
		return fail(v, "error");
	ng_log_set(&v->log, "allow_elements",
		   json_integer((json_int_t)v->pod.policy.allow[0].n + (json_int_t)v->pod.policy.allow[1].n));
	ng_log_set(&v->log, "name_elements",
		   json_integer((json_int_t)v->pod.policy.names[0].n + (json_int_t)v->pod.policy.names[1].n));
	ng_log_emit(&v->log, "enforced", v->pod.reason, 0);
	return 0;
}

static int cmd_del(struct inv *v, FILE *in)
{
	enum ng_netns_status st;
	struct ng_nl nl;
	int fd = -1, rc;

	if (need_env(v, false) < 0)
		return fail(v, "error");
	/* DEL must work when the config has since become invalid: the table
	 * is removed either way, and the problem is logged, not returned. */
	if (load(v, in) < 0) {
		ng_log_set(&v->log, "config_error", json_string(v->err.msg));
		memset(&v->err, 0, sizeof(v->err));
	}
	if (!v->netns_path) {
		ng_log_emit(&v->log, "deleted", "no CNI_NETNS: the namespace is already gone", 0);
		return 0;
	}
	if (open_netns(v, &fd, &st) < 0) {
		if (v->err.code == NG_E_ENV) { /* the node's own namespace */
			ng_log_emit(&v->log, "deleted", v->err.msg, 0);
			return 0;
		}
		return fail(v, "error");
	}
	if (st == NG_NETNS_GONE) {
		ng_log_emit(&v->log, "deleted", "the network namespace is already gone", 0);
		return 0;
	}
	rc = ng_nl_open_netns(fd, NULL, &nl, &v->err);
	close(fd);
	if (rc < 0)
		return fail(v, "error");
	rc = ng_ruleset_delete(&nl, NG_TABLE, &v->err);
	ng_nl_close(&nl);
	if (rc < 0)
		return fail(v, "error");
	ng_log_emit(&v->log, "deleted", "table removed (or was not there)", 0);
	return 0;
}

static int cmd_check(struct inv *v, FILE *in)
{
	struct ng_snapshot snap = {0};
	struct ng_nl nl;
	bool enforced;
	int rc;

	if (need_env(v, true) < 0 || load(v, in) < 0)
		return fail(v, "error");
	if (ng_version_cmp(v->cfg.cni_version, "0.4.0") < 0) {
		ng_fail(&v->err, NG_E_VERSION, "CHECK needs cniVersion 0.4.0 or later (config says %s)",
			v->cfg.cni_version);
		return fail(v, "error");
	}
	if (load_prev(v) < 0)
		return fail(v, "refused");
	if ((rc = decide(v, NULL)) != 0)
		return rc;
	enforced = v->pod.enforced;
	if (open_pod_socket(v, &nl) < 0)
		return fail(v, "error");
	if (enforced) {
		rc = ng_ruleset_check(&nl, &v->pod.policy, NG_TABLE, NULL, &v->err);
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
		return fail(v, "differs");
	ng_log_emit(&v->log, "verified", enforced ? "ruleset matches the policy" : v->pod.reason, 0);
	return 0;
}

static int cmd_status_gc(struct inv *v, FILE *in)
{
	/* STATUS: ready when the config is valid. GC: tables live and die with
	 * their pod's namespace, so there is no state to collect. */
	if (load(v, in) < 0)
		return fail(v, "error");
	ng_log_emit(&v->log, strcmp(v->verb, "STATUS") == 0 ? "ready" : "collected", "configuration valid",
		    0);
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

int ng_cni_main(FILE *in, FILE *out)
{
	struct inv v;
	const char *cmd = env("CNI_COMMAND");
	int rc;

	memset(&v, 0, sizeof(v));
	v.out = out;
	v.verb = cmd ? cmd : "";
	ng_log_begin(&v.log, v.verb);

	if (!cmd) {
		ng_fail(&v.err, NG_E_ENV, "CNI_COMMAND is not set");
		rc = fail(&v, "error");
	} else if (!strcmp(cmd, "ADD")) {
		rc = cmd_add(&v, in);
	} else if (!strcmp(cmd, "DEL")) {
		rc = cmd_del(&v, in);
	} else if (!strcmp(cmd, "CHECK")) {
		rc = cmd_check(&v, in);
	} else if (!strcmp(cmd, "STATUS") || !strcmp(cmd, "GC")) {
		rc = cmd_status_gc(&v, in);
	} else if (!strcmp(cmd, "VERSION")) {
		rc = cmd_version(&v, in);
	} else {
		ng_fail(&v.err, NG_E_ENV,
			"CNI_COMMAND \"%.32s\" is not a CNI verb (ADD, DEL, CHECK, GC, STATUS, VERSION)",
			cmd);
		rc = fail(&v, "error");
	}

	ng_pod_policy_free(&v.pod);
	ng_prev_free(&v.prev);
	ng_config_free(&v.cfg);
	json_decref(v.root);
	return rc;
}
