/* The learner's hot path: a packet the pod's dns_answers chain queued is
 * read, what its DNS answer teaches is matched (policy/learn.c), planned
 * (agent/tracker.h) and committed to every table that enforces the pod
 * (agent/pod.h), and only then is the verdict given. Everything between
 * the queue and the verdict is ng_answer_packet, which a test drives with
 * an injected netlink transport (the pod's nl, sh->node_nl). */
#ifndef NG_AGENT_ANSWER_H
#define NG_AGENT_ANSWER_H

#include <stdint.h>

#include "agent/outq.h"
#include "agent/pod.h"
#include "agent/tracker.h"
#include "kernel/nfq.h"
#include "policy/learn.h"

/* The scratch of one answer at a time, reused from answer to answer (the
 * parsed message is ~66 KiB): what ng_answer_packet fills and reads. */
struct ng_answer_scratch {
	struct ng_dns_msg *msg;
	struct ng_learn_result lr;
	ng_learn_pair_vec taught;             /* the packet's messages' (entry, address) pairs */
	ng_pending_vec pending, pending_node; /* the pod's side, the node's */
	uint8_t *rx;                          /* the queue's receive buffer (ng_answer_serve) */
	/* The outstanding queries this packet's answers took: given back when
	 * the packet is dropped after all (its retransmission, or the
	 * client's next try with the same ID, must still match). */
	struct ng_outq_key taken[8];
	unsigned n_taken;
};
int ng_answer_scratch_init(struct ng_answer_scratch *s);
void ng_answer_scratch_free(struct ng_answer_scratch *s);

/* The verdict (NF_ACCEPT / NF_DROP) on packet `pk` of pod p's queue:
 *   - not queued by our chain (not the input hook, not in on the pod's
 *     interface: a queue rule of the pod's own, with NET_ADMIN, would hand
 *     us packets it wrote itself) or unreadable: dropped, counted (foreign);
 *   - not from one of the pod's resolvers (port 53): accepted, untouched;
 *   - UDP: the answer learned and committed, accepted once every
 *     namespace acknowledged, dropped when that failed; the node-side
 *     table learns only when the node saw this very answer cross the pod's
 *     host peer in reply to its query (agent/observer.h), otherwise only
 *     the pod's tables learn (counted: node_unseen);
 *   - TCP: the segment that completes a message is held until its
 *     addresses are committed; other in-order segments pass, a gap is
 *     dropped (the sender retransmits). */
uint32_t ng_answer_packet(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_answer_scratch *s,
			  const struct ng_nfq_packet *pk);

/* Answers read from one pod's queue per turn: the loop's epoll hands out
 * ready queues in turn, so a pod flooding answers waits for its own (and
 * past the kernel's queue length, 1024, has them dropped: fail closed),
 * while a neighbour's answer waits at most this many of the flooder's.
 * Counted per pod when hit (queue_budget_hits_total). */
#define NG_ANSWER_BUDGET 8

/* Reads what the pod's queue holds (at most NG_ANSWER_BUDGET datagrams)
 * and gives each packet its verdict. */
void ng_answer_serve(struct ng_pod *p, struct ng_pod_shared *sh, struct ng_answer_scratch *s);

#endif
