/* The agent's flow log history: the last NG_FLOW_RING events of the node
 * (a fixed array, overwritten oldest first: 2.5 MiB whatever happens),
 * each with a sequence number. A reader is a cursor into it: `--since`
 * starts the cursor at the first event of the time asked, `--follow`
 * keeps reading as events come, and a reader that falls behind finds its
 * next events overwritten: it is told how many it missed and goes on
 * from the oldest left. No reader ever holds the ring or its writer up.
 * Pure (one thread: the flow thread, agent/flow.h). */
#ifndef NG_FLOWRING_H
#define NG_FLOWRING_H

#include <stdint.h>

#include "node/flowev.h"

#define NG_FLOW_RING 4096

struct ng_flowring {
	struct ng_flow_ev *ev; /* NG_FLOW_RING slots */
	uint64_t next;         /* the sequence number the next push gets; the first is 1 */
};

/* -1 out of memory. */
int ng_flowring_init(struct ng_flowring *r);
void ng_flowring_free(struct ng_flowring *r);
/* Appends a copy of ev, its seq set; returns the seq. */
uint64_t ng_flowring_push(struct ng_flowring *r, const struct ng_flow_ev *ev);
/* The oldest sequence number still held (next when empty). */
uint64_t ng_flowring_oldest(const struct ng_flowring *r);
/* Event `seq`, or NULL when overwritten or not there yet. */
const struct ng_flow_ev *ng_flowring_get(const struct ng_flowring *r, uint64_t seq);
/* The first seq held whose event is from since_ms on (next if none). */
uint64_t ng_flowring_since(const struct ng_flowring *r, int64_t since_ms);

/* A reader's place: the next seq it wants, and what it missed. */
struct ng_flowcursor {
	uint64_t next;
	uint64_t missed; /* overwritten before it read them, not told yet */
};
/* The next event for cursor c (NULL: it has read everything); events it
 * missed meanwhile are added to c->missed. */
const struct ng_flow_ev *ng_flowcursor_next(const struct ng_flowring *r, struct ng_flowcursor *c);

#endif
