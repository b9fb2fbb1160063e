/* The poster of agent/kube.h: Events and pod-condition patches sent to the
 * API from a thread of its own, so a slow or absent API never holds the
 * ops thread. A bounded queue (NG_KPOST_QUEUE; past it the oldest event
 * goes, counted); a pod's condition is one slot, its newest state (a
 * patch that failed is tried again, 2 s later, while no newer one came);
 * the same pod, reason and message at most once per NG_KPOST_SAME_MS and at most
 * NG_KPOST_RATE events a second node-wide (Kubernetes' own event
 * recorder spam-filters the same way). */
#ifndef NG_AGENT_KPOST_H
#define NG_AGENT_KPOST_H

#include <stdbool.h>
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

#endif
