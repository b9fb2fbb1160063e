/* `status --names` on the ops thread. See opsnames.h. */
#include "agent/opsnames.h"

#include <string.h>

#include "base/clock.h"

static const struct ng_ops_agent_pod *find(const struct ng_ops_agent_pod *agent, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(agent[i].key, key))
			return &agent[i];
	return NULL;
}

void ng_opsnames_collect(struct ng_opod *const *pods, size_t n, const struct ng_ops_agent_pod *agent,
			 size_t n_agent, struct ng_podlocks *locks)
{
	for (size_t i = 0; i < n; i++) {
		struct ng_opod *p = pods[i];
		const struct ng_ops_agent_pod *a = find(agent, n_agent, p->d.key);
		struct ng_podlock *l;

		if (!a) { /* no learner serves it (any more): nothing learned to show */
			if (p->vp.has_taught) {
				p->vp.has_taught = false;
				p->vp.taught.n = p->vp.taught_names.n = 0;
			}
			continue;
		}
		if (p->vp.has_taught && p->vp.taught_gen == a->learned_gen)
			continue;
		l = ng_podlock_get(locks, p->d.key);
		if (!l)
			continue;
		p->vp.guard = p->pol_ok && p->pol.raw_guard;
		ng_podlock_lock(l);
		if (ng_podlock_rows(l, ng_mono_ms(), ng_wall_ms(), NG_VIEW_LEARNED_MAX, &p->vp) > 0)
			p->vp.taught_gen = a->learned_gen;
		ng_podlock_unlock_ops(locks, l); /* the learner may have parked the pod meanwhile */
		ng_podlock_put(locks, l);
	}
}
