/* The ops thread's published view (agent/ops_int.h): a copy of every
 * watched pod and the learner's totals, swapped in for /metrics, /readyz
 * and status.json. */
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "base/clock.h"
#include "agent/ops.h"
#include "agent/ops_int.h"
#include "node/statusjson.h"

/* An exact copy of n elements (no growth: the view is read-only). */
static int dup_array(void **dst, size_t *cap, const void *src, size_t n, size_t size)
{
	*dst = NULL;
	*cap = 0;
	if (n == 0)
		return 0;
	*dst = malloc(n * size);
	if (!*dst)
		return -1;
	memcpy(*dst, src, n * size);
	*cap = n;
	return 0;
}

static int copy_pod(const struct ng_view_pod *from, struct ng_view_pod *to)
{
	*to = *from;
	if (dup_array((void **)&to->counters.v, &to->counters.cap, from->counters.v, from->counters.n,
		      sizeof(*from->counters.v)) < 0) {
		memset(&to->names, 0, sizeof(to->names));
		return -1;
	}
	return dup_array((void **)&to->names.v, &to->names.cap, from->names.v, from->names.n,
			 sizeof(*from->names.v));
}

/* A complete view, built outside the lock (the learner's publish must
 * never wait on it) and swapped in under it; status.json rewritten. */
void ng_ops_publish_view(struct ng_ops *o)
{
	struct ng_view v = o->local, old;
	NG_VEC(struct ng_ops_agent_pod) agent = {0};
	json_t *j;

	memset(&v.pods, 0, sizeof(v.pods));
	v.now_ms = ng_wall_ms();
	pthread_mutex_lock(&o->mu);
	v.serving = o->agent_serving;
	memcpy(v.ac, o->agent_totals, sizeof(v.ac));
	v.has_agent = o->agent_published;
	if (dup_array((void **)&agent.v, &agent.cap, o->agent_pods.v, o->agent_pods.n, sizeof(*agent.v)) == 0)
		agent.n = o->agent_pods.n;
	pthread_mutex_unlock(&o->mu);
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_view_pod vp;

		if (copy_pod(&o->pods.v[i]->vp, &vp) < 0 || ng_vec_push(&v.pods, &vp) < 0) {
			ng_view_pod_free(&vp);
			break;
		}
		for (size_t k = 0; k < agent.n; k++)
			if (!strcmp(agent.v[k].key, vp.key)) {
				struct ng_view_pod *last = &v.pods.v[v.pods.n - 1];

				last->has_agent = true;
				memcpy(last->ac, agent.v[k].ac, sizeof(last->ac));
			}
	}
	ng_vec_free(&agent);
	v.ready.serving = v.serving;
	snprintf(v.ready.serving_msg, sizeof(v.ready.serving_msg), "%s",
		 v.serving ? "the agent serves every recorded pod"
			   : "the agent has not picked up every recorded pod yet");
	j = ng_status_to_json(&v);
	pthread_mutex_lock(&o->mu);
	old = o->shared;
	o->shared = v;
	pthread_mutex_unlock(&o->mu);
	ng_view_free(&old);
	if (j) {
		char path[4200], tmp[4300];

		snprintf(path, sizeof(path), "%s/" NG_STATUS_FILE, o->state_dir);
		snprintf(tmp, sizeof(tmp), "%s/." NG_STATUS_FILE ".tmp", o->state_dir);
		if (json_dump_file(j, tmp, JSON_COMPACT) == 0)
			rename(tmp, path);
		json_decref(j);
	}
	o->dirty = false;
	o->last_publish_ms = ng_mono_ms();
	malloc_trim(0);
}
