/* The agent's log: one JSON object per line on stderr. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

#include "agent/agent.h"
#include "base/decision_log.h"

void ng_alog(const char *level, const char *event, const struct ng_pod *p, const char *fmt, ...)
{
	char msg[1024], now[64];
	json_t *o;
	char *line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ng_utc_now(now, sizeof(now));
	o = json_pack("{s:s,s:s,s:s,s:s}", "time", now, "level", level, "event", event, "msg", msg);
	if (o && p) {
		json_object_set_new(o, "pod", json_string(p->policy.pod));
		json_object_set_new(o, "record", json_string(p->key));
	}
	line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (line) {
		fprintf(stderr, "%s\n", line);
		fflush(stderr);
	}
	free(line);
	json_decref(o);
}
