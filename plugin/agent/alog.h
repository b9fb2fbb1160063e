/* The agent's log: one JSON object per line on stderr,
 * {"time","level","event","pod","record","msg"}. */
#ifndef NG_ALOG_H
#define NG_ALOG_H

/* `pod` ("namespace/name") and `record` (the key) may be NULL. */
void ng_alog_line(const char *level, const char *event, const char *pod, const char *record, const char *msg);

#endif
