/* Live policy, on the ops thread (agent/ops.h): the platform's policy (our
 * entry in the active conflist, the file the runtime reads: state/confdir.h)
 * reaches running pods, not only new ones.
 *
 *   - The agent follows the active config of --cni-conf-dir: inotify on the
 *     directory (a rename into place, a write, a removal, another file
 *     becoming the first by name) and, as a safety net, a look at the
 *     active file's identity once a second (a symlink swapped elsewhere, a
 *     directory created late).
 *   - An entry that differs from the current one is validated by ADD's own
 *     parser (policy/config.h). Refused, missing or unreadable: nothing
 *     running changes, /readyz fails naming why, the log says it once.
 *     Valid: a new generation (state/policygen.h: stateDir/policy.json).
 *   - Every enforced pod of that network (its recorded stdin's "name" is
 *     the entry's: a pod of another network's conflist keeps its own) whose
 *     record is of another generation is planned again from the new entry
 *     with its recorded annotations and link facts (state/liveplan.h:
 *     grants the new envelope no longer covers dropped, never a mode less)
 *     and applied through the one re-plan path (agent/replan.h); a record
 *     whose entry already is the current one (an ADD that read the new file
 *     first) is only counted as current. A pod ADDed meanwhile with the old
 *     file is re-planned once its ADD recorded it; a pod DELed meanwhile is
 *     never touched again; a failed re-plan is tried again every 30 s.
 *   - The view: the node's generation, pods behind, counters, and a
 *     readiness line (ng_ready.policy). */
#ifndef NG_LIVEPOLICY_H
#define NG_LIVEPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/opspod.h"
#include "node/nodeview.h"

#define NG_LIVE_RETRY_MS 30000

struct ng_live;

/* conf_dir: whose active config is followed; state_dir: policy.json. Reads
 * the current generation and the active entry at once. NULL out of memory. */
struct ng_live *ng_live_new(const char *conf_dir, const char *state_dir);
void ng_live_free(struct ng_live *lv);

/* Has the conf dir an event waiting (a poll of its fd, nothing read)? The
 * ops thread's long loops (CHECKs, counters of every pod) give way to it. */
bool ng_live_pending(const struct ng_live *lv);

/* The port ids of its own sockets in the node's namespace (the re-plan
 * workers': agent/livepods.h), for the drift watch. */
const uint32_t *ng_live_self(const struct ng_live *lv, size_t *n);

/* The fd to poll (the conf dir's inotify; -1 while the directory is not
 * there: each tick tries again). */
int ng_live_fd(const struct ng_live *lv);
/* events: the directory's events, if any, are read and the active entry
 * read again (nothing to do when there were none: cheap, called before
 * every look at the pods, so that a pod ADDed with a file the runtime read
 * is never planned from the one before it); a tick (events false): the
 * active file's identity is looked at, the entry read again if it
 * changed. */
void ng_live_poll(struct ng_live *lv, bool events);
/* Every enforced pod onto the current generation (see above); fills each
 * pod's view (generation, behind) and the node's policy view and readiness
 * line in `local`. True when either changed (a view to publish). */
bool ng_live_run(struct ng_live *lv, struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env,
		 struct ng_view *local);

#endif
