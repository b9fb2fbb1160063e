/* The ops thread's published view. See opsview.h. */
#include "agent/opsview.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
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
		      sizeof(*from->counters.v)) < 0 ||
	    dup_array((void **)&to->names.v, &to->names.cap, from->names.v, from->names.n,
		      sizeof(*from->names.v)) < 0 ||
	    dup_array((void **)&to->taught_names.v, &to->taught_names.cap, from->taught_names.v,
		      from->taught_names.n, sizeof(*from->taught_names.v)) < 0 ||
	    dup_array((void **)&to->taught.v, &to->taught.cap, from->taught.v, from->taught.n,
		      sizeof(*from->taught.v)) < 0) {
		/* Only what was copied is this view's to free; the rest is not. */
		if (to->counters.v == from->counters.v)
			memset(&to->counters, 0, sizeof(to->counters));
		if (to->names.v == from->names.v)
			memset(&to->names, 0, sizeof(to->names));
		if (to->taught_names.v == from->taught_names.v)
			memset(&to->taught_names, 0, sizeof(to->taught_names));
		if (to->taught.v == from->taught.v)
			memset(&to->taught, 0, sizeof(to->taught));
		return -1;
	}
	return 0;
}

void ng_opsview_build(const struct ng_view *local, struct ng_opod *const *pods, size_t n,
		      const struct ng_opsview_learner *l, int64_t now_ms, struct ng_view *out)
{
	*out = *local;
	memset(&out->pods, 0, sizeof(out->pods));
	out->now_ms = now_ms;
	snprintf(out->agent_version, sizeof(out->agent_version), "%s", NG_VERSION);
	out->serving = l->serving;
	memcpy(out->ac, l->totals, sizeof(out->ac));
	out->has_agent = l->published;
	for (size_t i = 0; i < n; i++) {
		struct ng_view_pod vp;

		if (copy_pod(&pods[i]->vp, &vp) < 0 || ng_vec_push(&out->pods, &vp) < 0) {
			ng_view_pod_free(&vp);
			break;
		}
		for (size_t k = 0; k < l->n; k++)
			if (!strcmp(l->pods[k].key, vp.key)) {
				struct ng_view_pod *last = &out->pods.v[out->pods.n - 1];

				last->has_agent = true;
				memcpy(last->ac, l->pods[k].ac, sizeof(last->ac));
			}
	}
	out->ready.serving = out->serving;
	snprintf(out->ready.serving_msg, sizeof(out->ready.serving_msg), "%s",
		 out->serving ? "the agent serves every recorded pod"
			      : "the agent has not picked up every recorded pod yet");
}

void ng_opsview_write_status(const char *state_dir, const struct ng_view *v)
{
	json_t *j = ng_status_to_json(v);
	char path[4200], tmp[4300];

	if (!j)
		return;
	snprintf(path, sizeof(path), "%s/" NG_STATUS_FILE, state_dir);
	snprintf(tmp, sizeof(tmp), "%s/." NG_STATUS_FILE ".tmp", state_dir);
	if (json_dump_file(j, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	json_decref(j);
}
