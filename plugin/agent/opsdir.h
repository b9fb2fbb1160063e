/* The pods the ops thread watches, kept in step with stateDir/pods: one
 * per record file (agent/opspod.h), a refused one too until a later ADD
 * of the same pod decided or NG_REFUSED_KEEP_S passed; a pod goes when
 * its record does. Each function returns true when the list changed. */
#ifndef NG_OPSDIR_H
#define NG_OPSDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/vec.h"

typedef NG_VEC(struct ng_opod *) ng_opod_vec;

/* Every record read (a new or rewritten file: its pod loaded afresh),
 * pods whose file is gone dropped, stale refusals removed. */
bool ng_opsdir_scan(ng_opod_vec *pods, const char *state_dir);
/* The directory's events (inotify_fd watches it): a pod whose record was
 * removed is dropped at once. DEL removes the record before the tables,
 * so its own deletion of the host-side table, read next, is no drift. A
 * record moved out that is still there (exchanged for a new one) is not
 * removed. */
bool ng_opsdir_forget_deleted(ng_opod_vec *pods, int inotify_fd, const char *state_dir);
/* Drops pods[i] (logged when it was watched). */
void ng_opsdir_drop(ng_opod_vec *pods, size_t i, const char *why);

#endif
