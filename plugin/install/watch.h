/* `install --watch`: re-merge whenever the conf dir changes. Primary CNIs
 * (kindnetd, Cilium, Calico's install-cni) rewrite their config on start,
 * dropping our entry; from then until we put it back, new pods are not
 * protected, so the watcher reacts within a debounce interval. */
#ifndef NG_WATCH_H
#define NG_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* One reconcile pass. Returns 1 when it had to rewrite because something
 * else changed the conf dir (`file` then names the active config), 0 when
 * nothing had to change or only our own entry did, -1 on error (err
 * filled; the watcher logs it and retries with back-off). */
typedef int (*ng_reconcile_fn)(void *ctx, char *file, size_t file_len, struct ng_err *err);

/* Watches the directory open as `dirfd` (its inode, not its path) until
 * SIGTERM or SIGINT (returns 0) or until the directory itself goes away
 * (returns 1). Reconciles at once, on every change to a config-named file
 * (debounced), on any change in `entry_dir` (the mounted ConfigMap: kubelet
 * swaps its ..data symlink), and every minute regardless (missed events). */
int ng_watch_run(int dirfd, const char *label, const char *entry_dir, ng_reconcile_fn fn, void *ctx);

/* ---- fight detection (pure; exposed for the unit tests) ----
 * Writes of ours undone again and again mean another writer disagrees with
 * us. We keep re-merging (a missing entry leaves new pods unprotected) but
 * slow down exponentially and say so loudly, so that two writers do not
 * keep each other, and the runtime reloading its config, busy. */
#define NG_FIGHT_MAX 32

struct ng_fight {
	unsigned limit;   /* writes within `window` that make a fight */
	double window;    /* seconds */
	double max_delay; /* back-off cap, seconds */
	double times[NG_FIGHT_MAX];
	unsigned n;        /* recent write times, oldest first */
	double delay;      /* current back-off; 0 when calm */
	double not_before; /* no reconcile before this time */
};

void ng_fight_init(struct ng_fight *f, unsigned limit, double window, double max_delay);
/* Records a write at `now`. When it makes `limit` or more writes within the
 * window, sets (or doubles) the back-off and returns the count, with the
 * time they took in *span; otherwise returns 0. */
unsigned ng_fight_wrote(struct ng_fight *f, double now, double *span);
/* A pass that found nothing to change. Once a whole window has passed since
 * our last write, the fight is over: returns true if one just ended. */
bool ng_fight_settled(struct ng_fight *f, double now);

#endif
