/* What the ops thread tells the flow thread. See opsflow.h. */
#include "agent/opsflow.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	return mix(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static uint64_t hash_of(const struct ng_flow_pod *p)
{
	uint64_t h = 1469598103934665603ull;

	h = mix_str(h, p->key);
	h = mix_str(h, p->pod.ns);
	h = mix_str(h, p->pod.name);
	h = mix_str(h, p->pod.netns);
	h = mix(h, &p->pod.netns_ino, sizeof(p->pod.netns_ino));
	h = mix(h, &p->pod.netns_dev, sizeof(p->pod.netns_dev));
	h = mix(h, &p->nflog, sizeof(p->nflog));
	h = mix(h, &p->group, sizeof(p->group));
	h = mix(h, &p->deny, sizeof(p->deny));
	h = mix(h, &p->guard, sizeof(p->guard));
	h = mix(h, &p->host, sizeof(p->host));
	h = mix(h, &p->host_ifindex, sizeof(p->host_ifindex));
	return mix_str(h, p->host_table);
}

void ng_opsflow_publish(struct ng_flow *flow, struct ng_opod *const *pods, size_t n, uint64_t *last)
{
	struct ng_flow_pod *list;
	uint64_t h = 1469598103934665603ull;
	size_t k = 0;

	if (!flow)
		return;
	list = calloc(n ? n : 1, sizeof(*list));
	if (!list)
		return;
	/* Enforced pods whose policy compiled and whose namespace is there:
	 * the ops thread lets go of a gone namespace, and so does the flow
	 * thread, at once. */
	for (size_t i = 0; i < n; i++) {
		const struct ng_opod *p = pods[i];

		if (!ng_opod_enforced(p) || !p->pol_ok || !p->nl_open ||
		    ng_flow_pod_from_record(&p->d, &p->pol, &list[k]) < 0)
			continue;
		h = mix(h, &(uint64_t){hash_of(&list[k])}, sizeof(uint64_t));
		k++;
	}
	h = mix(h, &k, sizeof(k));
	if (h != *last) {
		ng_flow_set_pods(flow, list, k);
		*last = h;
	}
	for (size_t i = 0; i < k; i++)
		ng_flow_pod_free(&list[i]);
	free(list);
}
