/* The flow log on the command line. See flowcli.h. */
#include "node/flowcli.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "kernel/unixsock.h"
#include "node/flowreq.h"
#include "node/flowsrc.h"
#include "policy/config.h"
#include "state/recpolicy.h"
#include "state/record.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* SIGINT and SIGTERM end the wait (no SA_RESTART): the reader stops cleanly. */
static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

struct out {
	const struct ng_flowcli *o;
	long seen; /* refusals printed */
};

static bool done(const struct out *w)
{
	return stop || (w->o->count && w->seen >= w->o->count);
}

static void print_event(const struct ng_flow_ev *ev, const struct ng_nflog_record *r, void *data)
{
	struct out *w = data;
	char line[1200];

	if (done(w) || !ng_flow_match(&w->o->filter, ev))
		return;
	if (w->o->json) {
		json_t *j = ng_flowev_to_json(ev);

		if (!j)
			return;
		/* `logs` has always printed the message's group and prefix. */
		if (w->o->legacy && r) {
			json_object_set_new(j, "group", json_integer(r->group));
			if (r->prefix && ev->category[0] && strcmp(ev->category, "foreign") != 0)
				json_object_set_new(j, "prefix", json_string(r->prefix));
		}
		json_dumpf(j, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		ng_flowev_text(ev, line, sizeof(line));
		puts(line);
	}
	fflush(stdout);
	w->seen += ev->kind == NG_FLOW_REFUSAL;
}

/* ms left of --duration, or a second when there is none. */
static int wait_ms(int64_t end)
{
	int64_t left = end ? end - ng_mono_ms() : 1000;

	return left > 1000 ? 1000 : left < 0 ? 0 : (int)left;
}

/* ---- through the agent --------------------------------------------------------- */

/* A string field of the agent's line, "?" when it has none. */
static const char *str(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "?";
}

static void print_start(const struct ng_flowcli *o, const json_t *s)
{
	const json_t *un = json_object_get(s, "unwatched"), *u;
	size_t i;

	fprintf(stderr, "%s: the agent watches %lld of the node's %lld enforced pods", o->cmd,
		(long long)json_integer_value(json_object_get(s, "watched")),
		(long long)json_integer_value(json_object_get(s, "pods")));
	if (json_string_value(json_object_get(s, "oldest")))
		fprintf(stderr, "; its history (the last %lld events) starts %s",
			(long long)json_integer_value(json_object_get(s, "ring")),
			json_string_value(json_object_get(s, "oldest")));
	fputc('\n', stderr);
	for (i = 0; i < json_array_size(un) && (u = json_array_get(un, i)); i++)
		fprintf(stderr, "%s: not watched: %s/%s: %s\n", o->cmd, str(u, "pod_namespace"),
			str(u, "pod_name"), str(u, "why"));
}

/* One line of the agent's answer; -1 on an error line. */
static int agent_line(struct out *w, const char *line, size_t len)
{
	const struct ng_flowcli *o = w->o;
	json_error_t je;
	json_t *j = json_loadb(line, len, 0, &je);
	const char *event = str(j, "event");
	struct ng_flow_ev ev;
	struct ng_err err = {0};
	int rc = 0;

	if (!event) {
		fprintf(stderr, "%s: the agent sent what is not a flow log line: %.200s\n", o->cmd, line);
	} else if (!strcmp(event, "error")) {
		fprintf(stderr, "%s: the agent: %s\n", o->cmd, str(j, "error"));
		rc = -1;
	} else if (!strcmp(event, "start")) {
		if (o->json) {
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
			fflush(stdout);
		} else {
			print_start(o, j);
		}
	} else if (ng_flowev_from_json(j, &ev, &err) < 0) {
		fprintf(stderr, "%s: %s: %.200s\n", o->cmd, err.msg, line);
	} else if (o->json) {
		if (!done(w)) {
			fwrite(line, 1, len, stdout);
			fputc('\n', stdout);
			fflush(stdout);
			w->seen += ev.kind == NG_FLOW_REFUSAL;
		}
	} else {
		print_event(&ev, NULL, w);
	}
	json_decref(j);
	return rc;
}

int ng_flowcli_agent(const struct ng_flowcli *o)
{
	struct ng_flow_req req = {
		.op = NG_FLOW_OP_OBSERVE, .filter = o->filter, .history = o->history, .follow = o->follow};
	struct out w = {.o = o};
	struct ng_err err = {0};
	char path[4200], buf[65536];
	size_t have = 0;
	int64_t end = o->duration > 0 ? ng_mono_ms() + (int64_t)(o->duration * 1000) : 0;
	bool none;
	int fd, n, rc = 0;

	snprintf(path, sizeof(path), "%s/" NG_AGENT_SOCK, o->state_dir);
	fd = ng_unix_connect(path, &none, &err);
	if (fd < 0) {
		if (none)
			return NG_FLOWCLI_NO_AGENT;
		fprintf(stderr, "%s: %s\n", o->cmd, err.msg);
		return 1;
	}
	n = ng_flow_req_line(&req, buf, sizeof(buf));
	if (n < 0 || write(fd, buf, (size_t)n) != n) {
		fprintf(stderr, "%s: cannot ask the agent: %s\n", o->cmd, strerror(errno));
		close(fd);
		return 1;
	}
	catch_signals();
	while (!done(&w)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t got;
		char *nl;

		if (end && ng_mono_ms() >= end)
			break;
		if (poll(&p, 1, wait_ms(end)) <= 0)
			continue;
		got = read(fd, buf + have, sizeof(buf) - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			/* Without --follow the agent ends the answer; with it, only
			 * by stopping (a restart): said, and not a success. */
			if (o->follow && !stop) {
				fprintf(stderr, "%s: the agent closed the stream (it stopped or restarted)\n",
					o->cmd);
				rc = 1;
			}
			break;
		}
		have += (size_t)got;
		while (!done(&w) && (nl = memchr(buf, '\n', have))) {
			size_t len = (size_t)(nl - buf);

			if (agent_line(&w, buf, len) < 0)
				rc = 1;
			memmove(buf, nl + 1, have - len - 1);
			have -= len + 1;
		}
		if (rc || have == sizeof(buf))
			break;
	}
	close(fd);
	return rc;
}

/* ---- on its own --------------------------------------------------------------- */

/* The enforced record of pod ns/name, or of the namespace `fd` names. */
static bool find_record(const char *state_dir, const struct ng_flow_filter *f, int fd, struct ng_record *out)
{
	char dir[4200], path[4600], key[256];
	struct stat ns_st;
	struct dirent *e;
	bool refused, found = false;
	DIR *d;

	if (fd >= 0 && fstat(fd, &ns_st) < 0)
		return false;
	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		struct ng_err err = {0};

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused) || refused)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (ng_record_read(path, out, &err) < 0)
			continue;
		found = !strcmp(out->decision, "enforced") &&
			(fd >= 0 ? out->pod.netns_ino == (uint64_t)ns_st.st_ino &&
					   out->pod.netns_dev == (uint64_t)ns_st.st_dev
				 : !strcmp(out->pod.ns, f->ns) && !strcmp(out->pod.name, f->name));
		if (!found)
			ng_record_free(out);
	}
	if (d)
		closedir(d);
	return found;
}

/* What the reader knows of the pod: its record's, else what was given. */
static int pod_info(const struct ng_flowcli *o, struct ng_flow_pod *info)
{
	struct ng_record rec;
	struct ng_policy pol;
	struct ng_err err = {0};
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (find_record(o->state_dir, &o->filter, o->filter.pod ? -1 : o->netns_fd, &rec)) {
		if (ng_record_policy(&rec, &pol, &err) == 0) {
			rc = ng_flow_pod_from_record(&rec, &pol, info);
			ng_policy_free(&pol);
		} else {
			fprintf(stderr, "%s: %s's record: %s\n", o->cmd, rec.key, err.msg);
		}
		ng_record_free(&rec);
		if (rc < 0)
			return -1;
	} else if (o->netns_fd < 0) {
		fprintf(stderr,
			"%s: no enforced pod %s/%s recorded in %s, and no agent serves there: give --netns "
			"PATH or --pid PID for a pod's namespace\n",
			o->cmd, o->filter.ns, o->filter.name, o->state_dir);
		return -1;
	} else {
		/* A namespace and no record: its own tables, as the group says. */
		if (o->filter.pod &&
		    ng_podref_set(&info->pod, o->filter.ns, o->filter.name, "", "", NULL, &err) < 0)
			return -1;
		info->nflog = true;
		info->group = NG_DEFAULT_LOG_GROUP;
	}
	if (o->group >= 0) {
		info->nflog = true;
		info->group = (uint16_t)o->group;
	}
	return 0;
}

static struct ng_flowsrc *only_pod(void *data, uint32_t ifindex)
{
	struct ng_flowsrc *s = data;

	return s->info.host && s->info.host_ifindex == ifindex ? s : NULL;
}

int ng_flowcli_direct(const struct ng_flowcli *o)
{
	struct ng_flow_pod info;
	struct ng_flowsrc src;
	struct ng_flownode node = {.open = false};
	struct out w = {.o = o};
	struct ng_err err = {0};
	int64_t end, next_tick;

	if (!o->follow) {
		fprintf(stderr,
			"%s: no agent serves, so there is no history: --follow listens in the pod's "
			"namespace "
			"from now\n",
			o->cmd);
		return 2;
	}
	if (pod_info(o, &info) < 0)
		return 2;
	if (ng_flowsrc_open(&src, &info, o->netns_fd, &err) < 0) {
		fprintf(stderr, "%s: %s%s\n", o->cmd, err.msg,
			strstr(err.msg, "another reader") ? "; if the node agent runs, it reads the group: "
							    "ask it (observe --pod NS/NAME, "
							    "without --netns or --pid)"
							  : "");
		ng_flow_pod_free(&info);
		return 1;
	}
	if (info.host &&
	    (ng_flownode_open(&node, &err) < 0 || ng_flownode_bind(&node, info.group, &err) < 0)) {
		fprintf(stderr, "%s: the node side's refusals will not be shown: %s\n", o->cmd, err.msg);
		ng_flownode_close(&node);
	}
	ng_flow_pod_free(&info);
	catch_signals();
	end = o->duration > 0 ? ng_mono_ms() + (int64_t)(o->duration * 1000) : 0;
	next_tick = ng_mono_ms() + 1000;
	while (!done(&w) && (!end || ng_mono_ms() < end)) {
		struct pollfd p[2] = {{.fd = ng_flowsrc_fd(&src), .events = POLLIN},
				      {.fd = node.open ? node.log.nl.fd : -1, .events = POLLIN}};

		if (poll(p, 2, wait_ms(end)) > 0) {
			if ((p[0].revents & POLLIN) && ng_flowsrc_read(&src, 0, print_event, &w, &err) < 0)
				break;
			if ((p[1].revents & POLLIN) &&
			    ng_flownode_read(&node, 0, only_pod, &src, print_event, &w, &err) < 0)
				break;
		}
		if (ng_mono_ms() >= next_tick) {
			ng_flowsrc_skipped(&src, node.nl_open ? &node.nl : NULL, ng_mono_ms(), false,
					   print_event, &w);
			next_tick = ng_mono_ms() + 1000;
		}
	}
	if (err.msg[0])
		fprintf(stderr, "%s: %s\n", o->cmd, err.msg);
	ng_flownode_close(&node);
	ng_flowsrc_close(&src);
	return err.msg[0] ? 1 : 0;
}
