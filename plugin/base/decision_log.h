/* The decision log: one JSON object per invocation, appended to logFile (or
 * written to stderr, which the runtime keeps in its own log). Every
 * decision is visible, including "skipped": a policy that applies to nothing
 * must look different from one that works. Schema in README "Decision log". */
#ifndef NG_LOG_H
#define NG_LOG_H

#include <jansson.h>
#include <time.h>

struct ng_log {
	struct timespec start;
	const char *verb;
	const char *log_file; /* NULL or "": stderr */
	const char *pod_namespace, *pod_name, *container_id, *netns;
	json_t *extra; /* optional fields merged into the line */
	/* The last line's decision, reason and code, kept for the node's
	 * metrics and status (cni/invstats.h): "" until a line is emitted. */
	char decision[24], reason[256];
	int code;
};

/* The current UTC time as 2026-11-29T09:19:29.535Z. */
void ng_utc_now(char *buf, size_t len);
/* A given time in the same form; returns the length written. */
int ng_utc_format(time_t sec, long ms, char *buf, size_t len);

void ng_log_begin(struct ng_log *l, const char *verb);
/* Adds a field to the line (steals the reference). */
void ng_log_set(struct ng_log *l, const char *key, json_t *value);
/* Writes the line: decision ("enforced", "skipped", "refused", "error",
 * "deleted", "verified", ...), a reason, and the CNI error code if any;
 * level "error" when there is a code, else "info"; msg the line in words. */
void ng_log_emit(struct ng_log *l, const char *decision, const char *reason, int code);

/* The fields every log line of ours starts with, in the conventional
 * structured-log shape: ts, level ("info", "warn", "error"), msg, plugin.
 * NULL when out of memory. */
json_t *ng_log_head(const char *level, const char *msg);
/* One compact JSON line, written with one write() (atomic with O_APPEND). */
int ng_log_write_line(int fd, json_t *o);

#endif
