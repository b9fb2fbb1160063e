/* The agent's view of its node's pods in the Kubernetes API, and what it
 * tells the API back. Two threads of their own (never the learner's, which
 * holds every DNS answer of the node; never the ops thread's, which must
 * keep CHECKing while the API hangs):
 *
 *   - the watch (kube.c): list the pods with fieldSelector
 *     spec.nodeName=<node>, then watch from the list's resourceVersion
 *     with bookmarks; 410 Gone (the version expired) lists again; any
 *     other failure backs off (1 s doubling to 30 s) and watches again
 *     from the last version seen. What it read is a table of pods the ops
 *     thread asks (ng_kube_lookup), with a wakeup fd;
 *   - the poster (kpost.c): Events and our pod condition, from a bounded
 *     queue, rate-limited per pod and reason.
 *
 * The API is never trusted to widen by accident: while the watch is down
 * the table stays as last read (the ops thread re-plans only on a change
 * it read), /readyz and /metrics say the watch is stale, and the next
 * list re-reads every pod. */
#ifndef NG_AGENT_KUBE_H
#define NG_AGENT_KUBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/kapi.h"
#include "agent/kpod.h"
#include "base/err.h"

/* The watch counts as current while connected, or reconnecting for less
 * than this long (a watch the server ends after timeoutSeconds is
 * re-opened at once). */
#define NG_KUBE_STALE_MS   5000
#define NG_KUBE_WATCH_S    240 /* timeoutSeconds of one watch request */
#define NG_KUBE_STALL_S    90  /* no byte for this long: the connection is dead */
#define NG_KUBE_BACKOFF_MS 30000

struct ng_kube_config {
	struct ng_kapi_config api;
	char node[256]; /* spec.nodeName of this node's pods */
};

struct ng_kube_status {
	bool enabled;
	bool listed;      /* a list was read since the agent started */
	bool connected;   /* the watch stream is open */
	bool stale;       /* not current (see NG_KUBE_STALE_MS) */
	int64_t stale_ms; /* how long not current */
	uint64_t lists, watches, errors, events_seen, pods;
	uint64_t posted, post_errors, post_dropped, rate_limited;
	char last_error[256];
};

struct ng_kube;

int ng_kube_start(const struct ng_kube_config *c, struct ng_kube **out, struct ng_err *err);
void ng_kube_stop(struct ng_kube *k);

/* Readable when the table changed (read it to clear). */
int ng_kube_wake_fd(const struct ng_kube *k);
void ng_kube_clear_wake(struct ng_kube *k);
/* A counter that moves with every change of the table. */
uint64_t ng_kube_generation(struct ng_kube *k);
/* The pod ns/name as last read: a copy into *out (free with
 * ng_kpod_free); false when the API has no such pod on this node, or no
 * list was read yet. */
bool ng_kube_lookup(struct ng_kube *k, const char *ns, const char *name, struct ng_kpod *out);

/* Queued for the poster (kpost.c). An event is dropped when the same pod
 * had the same reason within NG_KPOST_SAME_MS, or the queue is full. */
void ng_kube_event(struct ng_kube *k, const char *ns, const char *name, const char *uid, bool warning,
		   const char *reason, const char *msg);
void ng_kube_condition(struct ng_kube *k, const char *ns, const char *name, bool status, const char *reason,
		       const char *msg);

void ng_kube_status(struct ng_kube *k, struct ng_kube_status *out);
/* /readyz's line ("ok kube: ..." / "FAIL kube: ...") and /metrics' lines;
 * k may be NULL (the watch is off). readyz returns false when stale. */
bool ng_kube_readyz(struct ng_kube *k, FILE *out);
void ng_kube_metrics(struct ng_kube *k, FILE *out);

#endif
