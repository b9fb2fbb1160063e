/* The agent's log: one JSON object per line on stderr, the one schema
 * (README "Logs"): {"ts","level","msg","plugin","component":"agent",
 * "event","pod_namespace","pod_name","record"}; level "warning" is
 * written "warn". The learner and the ops
 * thread both write it. */
#ifndef NG_ALOG_H
#define NG_ALOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* `pod` ("namespace/name") and `record` (the key) may be NULL. */
void ng_alog_line(const char *level, const char *event, const char *pod, const char *record, const char *msg);
/* The same, msg formatted. */
void ng_alog(const char *level, const char *event, const char *pod, const char *record, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void ng_alogv(const char *level, const char *event, const char *pod, const char *record, const char *fmt,
	      va_list ap) __attribute__((format(printf, 5, 0)));

/* For what a pod can make happen at will (answers it asks for, commits
 * its own table refuses): a counter just raised by `by` to `count` is
 * logged when it passed a power of two (the 1st, 2nd, 4th, 8th, ...), so a
 * flood of them is a few dozen lines, each with the count so far. */
static inline bool ng_alog_due(uint64_t count, uint64_t by)
{
	uint64_t before = count - by;

	return by && (before == 0 || __builtin_clzll(count) != __builtin_clzll(before));
}

#endif
