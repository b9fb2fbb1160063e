#include "base/decision_log.h"

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

void ng_log_emit(struct ng_log *l, const char *decision, const char *reason, int code)
{
	struct timespec now;
	char ts[64];
	json_t *o = json_object();
	char *line;
	long long us;
	int fd = 2;

	snprintf(l->decision, sizeof(l->decision), "%s", decision ? decision : "");
	snprintf(l->reason, sizeof(l->reason), "%s", reason ? reason : "");
	l->code = code;
	if (!o)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ng_utc_now(ts, sizeof(ts));
	us = (long long)(now.tv_sec - l->start.tv_sec) * 1000000 + (now.tv_nsec - l->start.tv_nsec) / 1000;

	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "plugin", json_string("boxxkite-netguard"));
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
	line = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	json_decref(l->extra);
	l->extra = NULL;
	if (!line)
		return;

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
	size_t n = strlen(line);
	line[n] = '\n'; /* json_dumps leaves room: it allocated n + 1 */
	if (write(fd, line, n + 1) < 0 && fd != 2)
		fprintf(stderr, "boxxkite-netguard: cannot write logFile: %s\n", strerror(errno));
	if (fd != 2)
		close(fd);
	free(line);
}
