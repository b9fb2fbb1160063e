/* What the ops thread shares with the agent's other threads, each half
 * under a lock of its own:
 *   - the learner's half (`mu`): whether it serves every recorded pod, the
 *     port ids of its sockets (the drift watch knows its own commits by
 *     them), each pod's counters; the learner writes it, the ops thread
 *     copies it into each view;
 *   - the last complete view (`view_mu`): the ops thread swaps a new one
 *     in; the HTTP thread renders /metrics and /readyz from it and the flow
 *     thread's socket `status --names`. Only that swap ever waits for a
 *     renderer, never the learner (whose publish takes `mu`). */
#ifndef NG_AGENT_OPSSHARE_H
#define NG_AGENT_OPSSHARE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/opsview.h"
#include "base/vec.h"
#include "node/nodeview.h"

struct ng_opsshare {
	pthread_mutex_t mu;
	bool serving, published;
	uint32_t node_portid;
	NG_VEC(struct ng_ops_agent_pod) pods;
	uint64_t totals[NG_AC_COUNT];

	pthread_mutex_t view_mu;
	struct ng_view view; /* written by the ops thread alone */
	uint64_t view_gen;   /* the swaps so far */
};

void ng_opsshare_init(struct ng_opsshare *s);
void ng_opsshare_free(struct ng_opsshare *s);

/* The learner's half. */
void ng_opsshare_publish(struct ng_opsshare *s, bool serving, uint32_t node_portid,
			 const struct ng_ops_agent_pod *pods, size_t n, const uint64_t totals[NG_AC_COUNT]);
/* Is `portid` one of the learner's sockets: the node's (node) or pod key's? */
bool ng_opsshare_owns(struct ng_opsshare *s, const char *key, bool node, uint32_t portid);
/* A copy of it for a view: l->pods is the caller's to free (NULL when
 * there are none or memory ran out). */
void ng_opsshare_learner(struct ng_opsshare *s, struct ng_opsview_learner *l);

/* The view: swapped in (the old one freed), rendered, its generation. */
void ng_opsshare_swap(struct ng_opsshare *s, struct ng_view *v);
uint64_t ng_opsshare_metrics(struct ng_opsshare *s, FILE *out);
json_t *ng_opsshare_names(struct ng_opsshare *s, const char *ns, const char *name);
uint64_t ng_opsshare_gen(struct ng_opsshare *s);
/* The view's readiness with the learner's serving as of now. */
struct ng_ready ng_opsshare_ready(struct ng_opsshare *s);

#endif
