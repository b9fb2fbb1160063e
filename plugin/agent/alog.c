/* The agent's log: one JSON object per line on stderr. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/alog.h"
#include "base/decision_log.h"

void ng_alog_line(const char *level, const char *event, const char *pod, const char *record, const char *msg)
{
	/* The one schema (README "Logs"): the decision log's head, component
	 * "agent", the pod as pod_namespace/pod_name; "warning" is "warn". */
	json_t *o = ng_log_head(!strcmp(level, "warning") ? "warn" : level, msg);
	const char *slash = pod ? strchr(pod, '/') : NULL;

	if (!o)
		return;
	json_object_set_new(o, "component", json_string("agent"));
	json_object_set_new(o, "event", json_string(event));
	if (pod) {
		json_object_set_new(o, "pod_namespace", json_stringn(pod, slash ? (size_t)(slash - pod) : 0));
		json_object_set_new(o, "pod_name", json_string(slash ? slash + 1 : pod));
	}
	if (record)
		json_object_set_new(o, "record", json_string(record));
	if (ng_log_write_line(2, o) < 0) {
		/* stderr gone: nothing to log to */
	}
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
