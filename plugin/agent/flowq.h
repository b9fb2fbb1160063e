/* From the learner to the flow thread (agent/flow.h): the DNS queries the
 * agent refused, as flow log events. One producer (the main loop), one
 * consumer (the flow thread), a fixed ring of NG_FLOWQ slots and two
 * atomic indices: a push never waits and never allocates; when the flow
 * thread is behind, the event is dropped and counted (the stream says so),
 * never the learner slowed.
 *
 * Each pod's refusals pass a token bucket first (log.ratePerSecond and
 * log.burst, as its tables' log limit): what it holds back is counted per
 * pod and reported as "skipped", as the kernel's limit is. Pure. */
#ifndef NG_FLOWQ_H
#define NG_FLOWQ_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/flowring.h"
#include "node/flowev.h"

#define NG_FLOWQ 256

struct ng_flowq {
	struct ng_flow_ev slot[NG_FLOWQ];
	_Atomic uint64_t head; /* next to pop (the consumer's) */
	_Atomic uint64_t tail; /* next to push (the producer's) */
	_Atomic uint64_t dropped;
	int wake_fd; /* eventfd the consumer polls; -1: none */
};

/* -1 when the eventfd cannot be made. */
int ng_flowq_init(struct ng_flowq *q);
void ng_flowq_close(struct ng_flowq *q);
/* Producer: false when full (ev dropped, counted). */
bool ng_flowq_push(struct ng_flowq *q, const struct ng_flow_ev *ev);
/* Consumer: false when empty. */
bool ng_flowq_pop(struct ng_flowq *q, struct ng_flow_ev *ev);
/* Consumer: what pushes dropped since the last call. */
uint64_t ng_flowq_take_dropped(struct ng_flowq *q);

/* A token bucket of `burst` tokens refilled at `rate` a second. */
struct ng_tokens {
	double tokens;
	int64_t at_ms; /* mono ms of the last take; 0: full */
};
/* Takes a token at now_ms: false when there is none (over the rate). */
bool ng_tokens_take(struct ng_tokens *t, unsigned rate, unsigned burst, int64_t now_ms);

/* The flow thread: every refused query waiting (at most NG_FLOWQ a call)
 * into the ring, and a note of how many the queue had to drop. */
void ng_flowq_drain(struct ng_flowq *q, struct ng_flowring *ring);

#endif
