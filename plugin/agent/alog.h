/* The agent's log: one JSON object per line on stderr, the one schema
 * (README "Logs"): {"ts","level","msg","plugin","component":"agent",
 * "event","pod_namespace","pod_name","record"}; level "warning" is
 * written "warn". The learner and the ops
 * thread both write it. */
#ifndef NG_ALOG_H
#define NG_ALOG_H

#include <stdarg.h>

/* `pod` ("namespace/name") and `record` (the key) may be NULL. */
void ng_alog_line(const char *level, const char *event, const char *pod, const char *record, const char *msg);
/* The same, msg formatted. */
void ng_alog(const char *level, const char *event, const char *pod, const char *record, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void ng_alogv(const char *level, const char *event, const char *pod, const char *record, const char *fmt,
	      va_list ap) __attribute__((format(printf, 5, 0)));

#endif
