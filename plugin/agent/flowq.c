/* From the learner to the flow thread. See flowq.h. */
#include "agent/flowq.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"

int ng_flowq_init(struct ng_flowq *q)
{
	atomic_init(&q->head, 0);
	atomic_init(&q->tail, 0);
	atomic_init(&q->dropped, 0);
	q->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return q->wake_fd < 0 ? -1 : 0;
}

void ng_flowq_close(struct ng_flowq *q)
{
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	q->wake_fd = -1;
}

bool ng_flowq_push(struct ng_flowq *q, const struct ng_flow_ev *ev)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	uint64_t one = 1;

	if (tail - atomic_load_explicit(&q->head, memory_order_acquire) >= NG_FLOWQ) {
		atomic_fetch_add_explicit(&q->dropped, 1, memory_order_relaxed);
		return false;
	}
	q->slot[tail % NG_FLOWQ] = *ev;
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	/* Non-blocking: the count only saturates, never waits. */
	if (q->wake_fd >= 0 && write(q->wake_fd, &one, sizeof(one)) < 0) {
	}
	return true;
}

bool ng_flowq_pop(struct ng_flowq *q, struct ng_flow_ev *ev)
{
	uint64_t head = atomic_load_explicit(&q->head, memory_order_relaxed);

	if (head == atomic_load_explicit(&q->tail, memory_order_acquire))
		return false;
	*ev = q->slot[head % NG_FLOWQ];
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
	return true;
}

uint64_t ng_flowq_take_dropped(struct ng_flowq *q)
{
	return atomic_exchange_explicit(&q->dropped, 0, memory_order_relaxed);
}

bool ng_tokens_take(struct ng_tokens *t, unsigned rate, unsigned burst, int64_t now_ms)
{
	if (t->at_ms == 0 || now_ms < t->at_ms) {
		t->tokens = burst;
	} else {
		t->tokens += (double)(now_ms - t->at_ms) * rate / 1000.0;
		if (t->tokens > burst)
			t->tokens = burst;
	}
	t->at_ms = now_ms ? now_ms : 1;
	if (t->tokens < 1.0)
		return false;
	t->tokens -= 1.0;
	return true;
}

void ng_flowq_drain(struct ng_flowq *q, struct ng_flowring *ring)
{
	struct ng_flow_ev ev;
	uint64_t drop, one;

	if (read(q->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
	for (int i = 0; i < NG_FLOWQ && ng_flowq_pop(q, &ev); i++)
		ng_flowring_push(ring, &ev);
	drop = ng_flowq_take_dropped(q);
	if (drop) {
		ng_flowev_note(&ev, NG_FLOW_LOST, NULL, NULL, NG_LOG_POD, drop,
			       "refused DNS queries the flow thread could not take from the learner in time",
			       ng_wall_ms());
		ng_flowring_push(ring, &ev);
	}
}
