#include "agent/opshook.h"

#include <stdlib.h>
#include <string.h>

#include "agent/ops.h"

static void counters(const struct ng_counters *c, uint64_t *ac)
{
	ac[NG_AC_ANSWERS] += c->answers;
	ac[NG_AC_LEARNED] += c->learned;
	ac[NG_AC_KEPT_ALIVE] += c->kept_alive;
	ac[NG_AC_METADATA] += c->metadata;
	ac[NG_AC_UNPARSED] += c->unparsed;
	ac[NG_AC_FULL] += c->full;
	ac[NG_AC_COMMITS] += c->commits;
	ac[NG_AC_COMMIT_ERRORS] += c->commit_errors;
	ac[NG_AC_DROPPED] += c->dropped;
	ac[NG_AC_EXPIRED] += c->expired;
}

void ng_agent_ops_publish(struct ng_agent *a)
{
	struct ng_ops_agent_pod *pods;
	uint64_t totals[NG_AC_COUNT] = {0};

	if (!a->ops)
		return;
	pods = calloc(a->pods.n ? a->pods.n : 1, sizeof(*pods));
	if (!pods)
		return;
	counters(&a->c, totals);
	for (size_t i = 0; i < a->pods.n; i++) {
		const struct ng_pod *p = a->pods.v[i];

		snprintf(pods[i].key, sizeof(pods[i].key), "%s", p->key);
		pods[i].portid = p->nl.portid;
		counters(&p->c, pods[i].ac);
		counters(&p->c, totals);
	}
	ng_ops_publish(a->ops, a->serving, a->node_nl_open ? a->node_nl.portid : 0, pods, a->pods.n, totals);
	free(pods);
}

void ng_agent_ops_relearn(struct ng_agent *a)
{
	char keys[64][256];
	size_t n;

	if (!a->ops)
		return;
	while ((n = ng_ops_take_relearn(a->ops, keys, 64)) > 0)
		for (size_t i = 0; i < n; i++) {
			struct ng_pod *p = ng_pod_find(a, keys[i]);

			if (p)
				ng_pod_relearn(a, p);
		}
}
