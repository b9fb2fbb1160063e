/* One CNI invocation (cni/inv.h): input, output, the decision. */
#include "cni/inv.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_util.h"
#include "cni/cni.h"
#include "cni/hostmirror.h"
#include "kernel/nl_netns.h"
#include "spec/cniversion.h"

void ng_inv_begin(struct inv *v, const char *verb, FILE *out)
{
	memset(v, 0, sizeof(*v));
	v->out = out;
	v->verb = verb;
	ng_log_begin(&v->log, v->verb);
}

void ng_inv_end(struct inv *v)
{
	ng_record_free(&v->record);
	ng_pod_policy_free(&v->pod);
	ng_prev_free(&v->prev);
	ng_config_free(&v->cfg);
	json_decref(v->root);
}

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

void ng_inv_print_json(FILE *out, json_t *j)
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
	ng_inv_print_json(v->out, e);
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
	return ng_podref_set(&v->record.pod, v->args.pod_namespace, v->args.pod_name, v->container_id,
			     v->ifname, v->netns_path, &v->err);
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

/* The link facts of this attachment's record, when ADD recorded it in
 * this very namespace (same nsfs identity): a retried ADD and a CHECK
 * plan with them, never with what the pod shows now. */
static bool recorded_link(struct inv *v, struct ng_link_facts *out)
{
	char key[256], path[4600];
	struct ng_record r;
	struct ng_err e = {0};
	struct stat st;
	bool ok;

	if (!v->cfg.state_dir[0] || ng_record_key(v->container_id, v->ifname, key, sizeof(key), &e) < 0)
		return false;
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", v->cfg.state_dir, key);
	if (access(path, F_OK) < 0 || stat(v->netns_path, &st) < 0 || ng_record_read(path, &r, &e) < 0)
		return false;
	ok = r.have_link && !r.refused_file && r.pod.netns_dev == (uint64_t)st.st_dev &&
	     r.pod.netns_ino == (uint64_t)st.st_ino &&
	     (!strcmp(r.decision, "enforced") || !strcmp(r.decision, "pending"));
	if (ok)
		*out = r.link;
	v->rerun = ok;
	ng_record_free(&r);
	return ok;
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
	if (plan) {
		struct ng_link_facts rec;
		bool have = recorded_link(v, &rec);

		rc = ng_hostmirror_plan(&v->cfg, fd, v->ifname, json_object_get(v->root, "prevResult"),
					have ? &rec : NULL, &v->pod.policy, &v->record.link, v->link_drift,
					sizeof(v->link_drift), &v->log, &v->err);
		v->record.have_link = rc == 0;
	}
	if (rc == 0)
		rc = ng_nl_open_netns(fd, v->pod.policy.raw_guard ? v->pod.policy.ifname : NULL, nl, &v->err);
	close(fd);
	return rc;
}

/* ---- verbs ---------------------------------------------------------------- */

int ng_inv_print_prev(struct inv *v)
{
	json_t *res = ng_prev_convert(json_object_get(v->root, "prevResult"), v->cfg.cni_version, &v->err);

	if (!res)
		return -1;
	ng_inv_print_json(v->out, res);
	json_decref(res);
	return 0;
}

/* The pod's decision and policy (policy/pod_policy.h), the same for ADD,
 * CHECK and verify; logs refusals and errors under their own word. */
int ng_inv_decide(struct inv *v, ng_names_fn resolve)
{
	int rc = ng_pod_policy_build_kept(v->root, &v->cfg, &v->prev, &v->record.pod, v->keep, resolve, NULL,
					  &v->pod, &v->err);

	if (rc == NG_POD_ERROR)
		return ng_inv_fail(v, "error");
	if (rc < 0)
		return ng_inv_fail(v, "refused");
	return 0;
}
