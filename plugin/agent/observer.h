/* The node-side observer: what the node itself saw of each learning pod's
 * DNS, on the pod's host peer, read from NFLOG in the node's namespace.
 *
 * The host-side table of a learning pod (nft/render_host.c) copies to
 * NFLOG group NG_OBSERVE_GROUP every DNS query the pod sends to its
 * resolvers (the peer's ingress, after the MAC and source checks) and every
 * DNS answer from them the node sends towards the pod (the peer's egress).
 * One socket for all pods: a copy names its device (in: a query, out: an
 * answer), and the device is a pod's recorded host peer. UDP messages are
 * taken whole, TCP streams reassembled (agent/tcpflow.h, in order only)
 * into messages, and each fed to the pod's agent/nodeseen.h.
 *
 * Why the ordering holds, so the first connect after an answer succeeds:
 * the kernel hands the copy to this socket inside the peer's egress hook,
 * before the frame is transmitted to the pod; the pod's queue can only
 * hold the answer after that. The learner, when an answer's node-side
 * question finds nothing, reads this socket dry and asks once more.
 *
 * Fail closed: a copy the kernel could not queue (ENOBUFS: the reader fell
 * behind), a truncated or unparsable copy, a TCP gap: what it would have
 * vouched for is never vouched for; the node side learns nothing from it
 * (counted: lost). Copies never hold a packet: the data path does not wait
 * for this reader. */
#ifndef NG_AGENT_OBSERVER_H
#define NG_AGENT_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/nodeseen.h"
#include "agent/packet.h"
#include "agent/tcpflow.h"
#include "base/err.h"
#include "base/vec.h"
#include "kernel/nflog.h"

/* One pod, as the observer knows it (held in the learner's struct ng_pod). */
struct ng_podseen {
	uint32_t host_ifindex; /* the recorded host peer, in the node's namespace */
	struct ng_nodeseen seen;
	struct ng_tcpflows tq, ta; /* DNS over TCP: queries from the pod, answers to it */
};

struct ng_observer {
	struct ng_nflog log;
	bool open;
	NG_VEC(struct ng_podseen *) pods;
	struct ng_dns_msg *scratch;
	size_t tcp_budget; /* bytes of all pods' observed TCP streams (NG_TCP_BUDGET) */
	uint64_t records;  /* copies read */
	uint64_t foreign;  /* copies for no pod it knows (a pod being added or gone) */
};

/* An observer with no socket (the tests feed it ng_observer_record). -1
 * out of memory. */
int ng_observer_init(struct ng_observer *o);
/* ng_observer_init, and NG_OBSERVE_GROUP bound in the current (the
 * node's) namespace. -1 with err: nothing feeds it then, so the node side
 * learns nothing. */
int ng_observer_open(struct ng_observer *o, struct ng_err *err);
/* Its socket, for the loop's epoll (-1 when not open). */
int ng_observer_fd(const struct ng_observer *o);
void ng_observer_close(struct ng_observer *o);

/* A pod's host peer starts (and stops) being watched. -1 out of memory. */
int ng_observer_add(struct ng_observer *o, struct ng_podseen *ps);
void ng_observer_remove(struct ng_observer *o, struct ng_podseen *ps);
/* Frees what a pod's observation holds (its TCP buffers, kept answers). */
void ng_podseen_free(struct ng_observer *o, struct ng_podseen *ps);

/* Reads every copy waiting, without blocking. The number read, or -1. */
int ng_observer_drain(struct ng_observer *o);

/* Copies the kernel could not queue for us (the reader fell behind). */
uint64_t ng_observer_lost(const struct ng_observer *o);

/* May the node side learn from the DNS message msg[0..len) that packet k
 * (from the pod's queue) carried? ng_seen_vouch on the pod's observation,
 * after reading the socket dry if the first answer is no. False when the
 * observer was never set up. */
bool ng_observer_vouch(struct ng_observer *o, struct ng_podseen *ps, const struct ng_pkt *k,
		       const uint8_t *msg, size_t len);

/* Pure, for the tests: one NFLOG copy (as ng_nflog_parse read it) fed to
 * the pod it names; the caller gives the clock. */
void ng_observer_record(struct ng_observer *o, const struct ng_nflog_record *r, int64_t now_ms);

#endif
