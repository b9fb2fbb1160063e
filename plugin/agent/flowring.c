/* The agent's flow log history. See flowring.h. */
#include "agent/flowring.h"

#include <stdlib.h>

int ng_flowring_init(struct ng_flowring *r)
{
	r->ev = calloc(NG_FLOW_RING, sizeof(*r->ev));
	r->next = 1;
	return r->ev ? 0 : -1;
}

void ng_flowring_free(struct ng_flowring *r)
{
	free(r->ev);
	r->ev = NULL;
}

uint64_t ng_flowring_push(struct ng_flowring *r, const struct ng_flow_ev *ev)
{
	struct ng_flow_ev *slot = &r->ev[r->next % NG_FLOW_RING];

	*slot = *ev;
	slot->seq = r->next;
	return r->next++;
}

uint64_t ng_flowring_oldest(const struct ng_flowring *r)
{
	return r->next > NG_FLOW_RING ? r->next - NG_FLOW_RING : 1;
}

const struct ng_flow_ev *ng_flowring_get(const struct ng_flowring *r, uint64_t seq)
{
	if (seq < ng_flowring_oldest(r) || seq >= r->next)
		return NULL;
	return &r->ev[seq % NG_FLOW_RING];
}

uint64_t ng_flowring_since(const struct ng_flowring *r, int64_t since_ms)
{
	/* Times come from the wall clock and the kernel's stamps: not
	 * strictly ordered, so a scan (at most NG_FLOW_RING), not a search. */
	for (uint64_t s = ng_flowring_oldest(r); s < r->next; s++)
		if (r->ev[s % NG_FLOW_RING].ts_ms >= since_ms)
			return s;
	return r->next;
}

const struct ng_flow_ev *ng_flowcursor_next(const struct ng_flowring *r, struct ng_flowcursor *c)
{
	uint64_t oldest = ng_flowring_oldest(r);

	if (c->next < oldest) {
		c->missed += oldest - c->next;
		c->next = oldest;
	}
	if (c->next >= r->next)
		return NULL;
	return &r->ev[c->next++ % NG_FLOW_RING];
}
