/* The agent's log: one JSON object per line on stderr. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/alog.h"
#include "base/decision_log.h"

void ng_alog_line(const char *level, const char *event, const char *pod, const char *record, const char *msg)
{
	char now[64];
	json_t *o;
	char *line;

	ng_utc_now(now, sizeof(now));
	o = json_pack("{s:s,s:s,s:s,s:s}", "time", now, "level", level, "event", event, "msg", msg);
	if (o && pod)
		json_object_set_new(o, "pod", json_string(pod));
	if (o && record)
		json_object_set_new(o, "record", json_string(record));
	line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (line) {
		fprintf(stderr, "%s\n", line);
		fflush(stderr);
	}
	free(line);
	json_decref(o);
}

void ng_alogv(const char *level, const char *event, const char *pod, const char *record, const char *fmt,
	      va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	ng_alog_line(level, event, pod, record, msg);
}

void ng_alog(const char *level, const char *event, const char *pod, const char *record, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ng_alogv(level, event, pod, record, fmt, ap);
	va_end(ap);
}
