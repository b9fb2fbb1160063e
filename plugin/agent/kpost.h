/* The poster of agent/kube.h: Events and pod-condition patches sent to the
 * API from a thread of its own, so a slow or absent API never holds the
 * ops thread. A bounded queue (NG_KPOST_QUEUE; past it the oldest event
 * goes, counted); a pod's condition is its newest state (a patch that
 * failed is tried again, 2 s later, while no newer one came), but a False
 * not sent yet is never folded into a True (ng_kpost_fold);
 * the same pod, reason and message at most once per NG_KPOST_SAME_MS and at most
 * NG_KPOST_RATE events a second node-wide (Kubernetes' own event
 * recorder spam-filters the same way). */
#ifndef NG_AGENT_KPOST_H
#define NG_AGENT_KPOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/kapi.h"
#include "base/err.h"

#define NG_KPOST_QUEUE   256
#define NG_KPOST_SAME_MS 10000
#define NG_KPOST_RATE    5

struct ng_kpost_counts {
	uint64_t posted, errors, dropped, rate_limited;
};

struct ng_kpost;

int ng_kpost_start(const struct ng_kapi_config *api, const char *node, struct ng_kpost **out,
		   struct ng_err *err);
void ng_kpost_stop(struct ng_kpost *p);

void ng_kpost_event(struct ng_kpost *p, const char *ns, const char *name, const char *uid, bool warning,
		    const char *reason, const char *msg);
void ng_kpost_condition(struct ng_kpost *p, const char *ns, const char *name, bool status, const char *reason,
			const char *msg);
void ng_kpost_counts(struct ng_kpost *p, struct ng_kpost_counts *out);

/* A pod's new condition against its queued ones (`n` of them, oldest
 * first; `held[i]`: a False not tried yet): how many of those stay, from
 * the first; the new one takes the next one's place (the rest go), or
 * goes behind them all when every one stays. The newest state wins, but
 * a False not tried yet stays before a True: the API (the kubelet's
 * readiness gate, a gateway watching the pod) sees every time the pod was
 * not verified, even when a repair or a grant change was over within
 * milliseconds. A False the API refused is not held (its retry is the
 * newest state's). So a pod never has more than two queued. Pure. */
size_t ng_kpost_fold(const bool *held, size_t n, bool status);

#endif
