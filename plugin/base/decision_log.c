#include "base/decision_log.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ng_utc_format(time_t sec, long ms, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&sec, &tm);
	return snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
			tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

void ng_utc_now(char *buf, size_t len)
{
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	ng_utc_format(wall.tv_sec, wall.tv_nsec / 1000000, buf, len);
}

void ng_log_begin(struct ng_log *l, const char *verb)
{
	memset(l, 0, sizeof(*l));
	clock_gettime(CLOCK_MONOTONIC, &l->start);
	l->verb = verb;
}

void ng_log_set(struct ng_log *l, const char *key, json_t *value)
{
	if (!l->extra)
		l->extra = json_object();
	if (l->extra && value)
		json_object_set_new(l->extra, key, value);
	else
		json_decref(value);
}

static void put_str(json_t *o, const char *key, const char *v)
{
	if (v && *v)
		json_object_set_new(o, key, json_string(v));
}

int ng_log_write_line(int fd, json_t *o)
{
	char *line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	size_t n;
	int rc = 0;

	if (!line)
		return -1;
	n = strlen(line);
	line[n] = '\n'; /* json_dumps leaves room: it allocated n + 1 */
	if (write(fd, line, n + 1) < 0)
		rc = -1;
	free(line);
	return rc;
}

json_t *ng_log_head(const char *level, const char *msg)
{
	char ts[64];
	json_t *o = json_object();

	if (!o)
		return NULL;
	ng_utc_now(ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "level", json_string(level));
	json_object_set_new(o, "msg", json_string(msg ? msg : ""));
	json_object_set_new(o, "plugin", json_string("boxxkite-netguard"));
	return o;
}

/* "error" for a call that returns a CNI error (the runtime sees it fail),
 * "info" for every other decision, skipped included: it is expected. */
static const char *level_of(int code)
{
	return code ? "error" : "info";
}

void ng_log_emit(struct ng_log *l, const char *decision, const char *reason, int code)
{
	struct timespec now;
	char msg[768];
	json_t *o;
	long long us;
	int fd = 2;

	snprintf(l->decision, sizeof(l->decision), "%s", decision ? decision : "");
	snprintf(l->reason, sizeof(l->reason), "%s", reason ? reason : "");
	l->code = code;
	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (long long)(ng_ts_us(&now) - ng_ts_us(&l->start));
	/* msg: the line in words, "ADD enforced sandboxes/p1: <reason>". */
	snprintf(msg, sizeof(msg), "%s %s%s%s%s%s%s", l->verb ? l->verb : "", decision ? decision : "",
		 l->pod_name && *l->pod_name ? " " : "", l->pod_namespace ? l->pod_namespace : "",
		 l->pod_name && *l->pod_name ? "/" : "", l->pod_name ? l->pod_name : "",
		 reason && *reason ? ": " : "");
	if (reason && *reason)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "%s", reason);
	o = ng_log_head(level_of(code), msg);
	if (o) {
		json_object_set_new(o, "component", json_string("plugin"));
		json_object_set_new(o, "event", json_string("decision"));
	}
	if (!o) {
		json_decref(l->extra);
		l->extra = NULL;
		return;
	}
	put_str(o, "verb", l->verb);
	put_str(o, "decision", decision);
	put_str(o, "reason", reason);
	if (code)
		json_object_set_new(o, "code", json_integer(code));
	put_str(o, "pod_namespace", l->pod_namespace);
	put_str(o, "pod_name", l->pod_name);
	put_str(o, "container_id", l->container_id);
	put_str(o, "netns", l->netns);
	json_object_set_new(o, "duration_us", json_integer(us));
	if (l->extra)
		json_object_update(o, l->extra);
	json_decref(l->extra);
	l->extra = NULL;

	if (l->log_file && *l->log_file) {
		/* O_APPEND makes one write() of one line atomic among the many
		 * plugin processes a node runs at once; O_NOFOLLOW keeps a planted
		 * symlink from redirecting a root-owned write. */
		fd = open(l->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
		if (fd < 0) {
			fprintf(stderr, "boxxkite-netguard: cannot open logFile %s: %s; logging to stderr\n",
				l->log_file, strerror(errno));
			fd = 2;
		}
	}
	if (ng_log_write_line(fd, o) < 0 && fd != 2)
		fprintf(stderr, "boxxkite-netguard: cannot write logFile: %s\n", strerror(errno));
	if (fd != 2)
		close(fd);
	json_decref(o);
}
