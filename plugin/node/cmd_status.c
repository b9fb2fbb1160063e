#include "node/cmd_status.h"
#include "base/clock.h"
#include "base/version.h"

#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/unixsock.h"
#include "node/flowreq.h"
#include "node/statusnames.h"
#include "state/ready.h"
#include "state/recpolicy.h"
#include "state/record.h"
#include "node/podstate.h"
#include "node/statusjson.h"
#include "node/statustable.h"
#include "policy/config.h"

/* The agent's view is used while it is this fresh (it rewrites it every
 * second). */
#define FRESH_MS 10000

static bool from_agent(const char *state_dir, struct ng_view *v)
{
	char path[4200];
	struct ng_err err = {0};
	json_error_t je;
	json_t *o;
	int rc;

	if (ng_agent_serving(state_dir) != 1)
		return false;
	snprintf(path, sizeof(path), "%s/" NG_STATUS_FILE, state_dir);
	o = json_load_file(path, 0, &je);
	if (!o)
		return false;
	rc = ng_status_from_json(o, v, &err);
	json_decref(o);
	if (rc < 0 || ng_wall_ms() - v->now_ms > FRESH_MS) {
		if (rc == 0)
			ng_view_free(v);
		return false;
	}
	return true;
}

/* One record, read against the kernel now (no agent serving). */
static void look(const struct ng_record *d, struct ng_nl *node_nl, struct ng_view_pod *vp)
{
	struct ng_policy pol;
	struct ng_err err = {0};
	struct ng_nl nl;
	int rc;

	if (strcmp(d->decision, "enforced") != 0)
		return;
	if (ng_record_policy(d, &pol, &err) < 0) {
		snprintf(vp->read_error, sizeof(vp->read_error), "policy: %.150s", err.msg);
		return;
	}
	rc = ng_podstate_open(d, &nl, &err);
	if (rc != 0) {
		snprintf(vp->read_error, sizeof(vp->read_error), "%.150s",
			 rc > 0 ? "the pod's network namespace is gone" : err.msg);
	} else {
		ng_podstate_read(&nl, node_nl, d, &pol, vp);
		rc = ng_podstate_check(&nl, node_nl, d, &pol, vp->diff, sizeof(vp->diff));
		if (rc >= 0) {
			vp->checked = true;
			vp->in_sync = rc == 0;
			vp->last_check_ms = ng_wall_ms();
		}
		ng_nl_close(&nl);
	}
	ng_policy_free(&pol);
}

/* Records the view does not have yet (all of them without an agent). */
static void add_records(const char *state_dir, struct ng_view *v, bool kernel)
{
	char dir[4200], path[4600], key[256];
	struct ng_nl node_nl;
	struct ng_err err = {0};
	bool node_open = kernel && ng_nl_open(&node_nl, &err) == 0;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		struct ng_record rec;
		struct ng_view_pod vp;
		bool refused, have = false;

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused))
			continue;
		for (size_t i = 0; i < v->pods.n && !have; i++)
			have = !strcmp(v->pods.v[i].key, key) && v->pods.v[i].refused_file == refused;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (have || ng_record_read(path, &rec, &err) < 0)
			continue;
		memset(&vp, 0, sizeof(vp));
		ng_podstate_from_record(&rec, &vp);
		if (kernel)
			look(&rec, node_open ? &node_nl : NULL, &vp);
		/* else: new, the agent has not looked yet ("not-yet"). */
		if (ng_vec_push(&v->pods, &vp) < 0)
			ng_view_pod_free(&vp);
		ng_record_free(&rec);
	}
	if (d)
		closedir(d);
	if (node_open)
		ng_nl_close(&node_nl);
}

static int by_name(const void *a, const void *b)
{
	const struct ng_view_pod *x = a, *y = b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->name, y->name);
}

static json_t *sum_json(const struct ng_status_sum *s)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "pods", (json_int_t)s->pods, "enforced",
			 (json_int_t)s->enforced, "inSync", (json_int_t)s->in_sync, "differ",
			 (json_int_t)s->differs, "cannotCheck", (json_int_t)s->cannot_check, "notYet",
			 (json_int_t)s->not_yet, "skipped", (json_int_t)s->skipped, "refused",
			 (json_int_t)s->refused, "other", (json_int_t)s->other);
}

/* `status --names [NS/NAME]`: the agent's answer (node/statusnames.h). */
static int names_main(const char *state_dir, const char *pod, bool json)
{
	struct ng_flow_req req = {.op = NG_FLOW_OP_NAMES};
	struct ng_err err = {0};
	char path[4200], line[NG_FLOW_REQ_MAX];
	json_error_t je = {0};
	json_t *doc;
	FILE *in;
	bool none;
	int fd, n, rc = 0;

	if (pod && ng_flow_filter_pod(&req.filter, pod, &err) < 0) {
		fprintf(stderr, "boxxkite-netguard status: %s\n", err.msg);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/" NG_AGENT_SOCK, state_dir);
	fd = ng_unix_connect(path, &none, &err);
	if (fd < 0) {
		fprintf(stderr, "boxxkite-netguard status: --names: %s\n",
			none ? "no agent serves here: the learned names are the agent's" : err.msg);
		return 1;
	}
	n = ng_flow_req_line(&req, line, sizeof(line));
	in = fdopen(fd, "r");
	if (n < 0 || !in || write(fd, line, (size_t)n) != n) {
		fprintf(stderr, "boxxkite-netguard status: --names: cannot ask the agent\n");
		if (in)
			fclose(in);
		else
			close(fd);
		return 1;
	}
	doc = json_loadf(in, JSON_DISABLE_EOF_CHECK, &je);
	fclose(in);
	if (!doc || json_object_get(doc, "error")) {
		fprintf(stderr, "boxxkite-netguard status: --names: the agent: %s\n",
			doc && json_string_value(json_object_get(doc, "error"))
				? json_string_value(json_object_get(doc, "error"))
				: je.text);
		json_decref(doc);
		return 1;
	}
	if (pod && json_array_size(json_object_get(doc, "pods")) == 0) {
		fprintf(stderr, "boxxkite-netguard status: --names: no enforced pod %s on this node\n", pod);
		rc = 1;
	}
	if (json) {
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	} else {
		ng_status_names_table(doc, stdout);
	}
	json_decref(doc);
	return rc;
}

int ng_status_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"state-dir", required_argument, NULL, 's'},
		{"names", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *state_dir = NG_DEFAULT_STATE_DIR;
	char source[160];
	struct ng_view v;
	struct ng_status_source src = {.version = NG_VERSION};
	struct ng_status_sum sum;
	bool json = false, have_dir, names = false;
	struct stat st;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': state_dir = optarg; break;
		case 'n': names = true; break;
		case 'h':
			printf("usage: boxxkite-netguard status [--json] [--state-dir DIR]\n"
			       "       boxxkite-netguard status --names [NS/NAME] [--json] [--state-dir "
			       "DIR]\n"
			       "  Every pod the plugin decided about on this node: decision and reason, the\n"
			       "  policy generation it runs (GEN: live policy), its tables on both sides\n"
			       "  present and matching the recorded policy, the last CHECK, deny counts,\n"
			       "  learned names with their address counts; above them the agent (serving or\n"
			       "  not, version, ready, generation), the node's policy generation and the "
			       "pods\n"
			       "  by state.\n"
			       "  Read-only: the agent's published view when one serves, else the kernel, "
			       "now.\n"
			       "  --json       the same as one JSON object (README: \"status --json\")\n"
			       "  --names      what each learning pod's name entries taught, from the "
			       "agent:\n"
			       "               every address with its expiry on each side (pod, guard,\n"
			       "               node), and whether a live connection keeps it; NS/NAME: one\n"
			       "               pod. Exit 1 when no agent serves or no such pod.\n"
			       "  --state-dir  the plugin's stateDir (default %s)\n"
			       "  Exit status 0 when every enforced pod is in sync (also: no state dir, no "
			       "pod);\n"
			       "  3 when an enforced pod's tables are missing or differ; 4 when none does "
			       "but\n"
			       "  one could not be checked (or the agent has not looked yet); 2 usage.\n",
			       NG_DEFAULT_STATE_DIR);
			return 0;
		default: return 2;
		}
	}
	if (names)
		return names_main(state_dir, optind < argc ? argv[optind] : NULL, json);
	if (optind < argc) {
		fprintf(stderr, "boxxkite-netguard status: unexpected \"%s\" (NS/NAME goes with --names)\n",
			argv[optind]);
		return 2;
	}
	memset(&v, 0, sizeof(v));
	have_dir = stat(state_dir, &st) == 0;
	if (have_dir) {
		src.agent_running = ng_agent_serving(state_dir) == 1;
		src.from_agent = src.agent_running && from_agent(state_dir, &v);
		add_records(state_dir, &v, !src.from_agent);
	}
	if (!have_dir)
		snprintf(source, sizeof(source), "no state dir: no pod was recorded here");
	else if (src.from_agent)
		snprintf(source, sizeof(source), "the agent's view, %llds old",
			 (long long)((ng_wall_ms() - v.now_ms) / 1000));
	else
		snprintf(source, sizeof(source), "%s: read from the kernel now",
			 src.agent_running ? "the agent's view is stale or unreadable" : "no agent serves");
	if (v.pods.n > 1)
		qsort(v.pods.v, v.pods.n, sizeof(v.pods.v[0]), by_name);
	ng_status_sum(&v, &sum);
	if (json) {
		json_t *o = ng_status_to_json(&v);

		json_object_set_new(o, "source", json_string(source));
		json_object_set_new(o, "fromAgent", json_boolean(src.from_agent));
		json_object_set_new(o, "agentRunning", json_boolean(src.agent_running));
		json_object_set_new(o, "statusVersion", json_string(NG_VERSION));
		json_object_set_new(o, "summary", sum_json(&sum));
		json_object_set_new(o, "exit", json_integer(ng_status_exit(&sum)));
		json_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		if (!have_dir)
			fprintf(stderr,
				"boxxkite-netguard status: %s: no state dir (no pod was recorded here)\n",
				state_dir);
		ng_status_table(&v, ng_wall_ms(), &src, stdout);
	}
	ng_view_free(&v);
	return ng_status_exit(&sum);
}
