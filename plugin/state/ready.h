/* The agent's side of the pod record (state/record.h): the lock that says
 * an agent serves stateDir, the ready file through which it tells ADD it
 * has bound a pod's queue, and DEL's wait for it to let the pod go. */
#ifndef NG_READY_H
#define NG_READY_H

#include <stdbool.h>

#include "base/err.h"

/* DEL: removes pods/<key>.json (missing is fine), then waits up to
 * `wait_ms` for the agent to drop the pod (its ready file goes). The
 * refused record stays. */
int ng_record_remove(const char *state_dir, const char *key, int wait_ms, struct ng_err *err);

/* ADD: waits until ready/<key> holds `nonce`; code 11 after `timeout_ms`. */
int ng_record_wait_ready(const char *state_dir, const char *key, const char *nonce, int timeout_ms,
			 struct ng_err *err);
/* Agent: writes ready/<key> (the nonce) / removes it. */
int ng_record_set_ready(const char *state_dir, const char *key, const char *nonce, struct ng_err *err);
void ng_record_clear_ready(const char *state_dir, const char *key);

/* Agent: removes every entry of ready/ that keep(name, data) does not
 * claim (a ready file, or a temp file of a write cut short, of a pod the
 * agent does not serve: DEL waits for the file only while an agent serves,
 * so a pod deleted while none did left its file behind). Only the agent
 * writes ready/, and only from the thread that calls this. How many went. */
unsigned ng_record_sweep_ready(const char *state_dir, bool (*keep)(const char *name, void *data), void *data);

/* Is an agent holding stateDir's lock? 1 yes, 0 no. */
int ng_agent_serving(const char *state_dir);

/* The pid of the agent holding stateDir's lock, as the kernel's lock table
 * (/proc/locks, in the reader's pid namespace) names it: 0 when none holds
 * it or its pid is not visible from here. Not a pid file: only the process
 * that really holds the lock is named. */
int ng_agent_pid(const char *state_dir);

/* Pure: the pid a line of /proc/locks names as holding an exclusive FLOCK
 * on the file (dev major:minor, inode); 0 for any other line. */
int ng_locks_flock_holder(const char *text, unsigned maj, unsigned min, unsigned long long ino);

#endif
