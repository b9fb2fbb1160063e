/* DNS over TCP (RFC 7766): messages framed by a 2-byte length on a byte
 * stream that arrives in segments. The agent must hold exactly the segment
 * that completes a message (until its addresses are committed) and let
 * every other segment through at once, so the stream never stalls. A
 * segment's bytes are taken in tentatively: when its verdict is a drop, the
 * flow rewinds and the sender's retransmission is read again.
 *
 * In order only: a segment beyond a gap is dropped (TCP sends it again
 * after the missing one); one wholly before the next expected byte is a
 * retransmission of bytes already read (passed). Bounded: NG_TCP_FLOWS per
 * pod, each buffering at most one message (65537 bytes), a pod's flows
 * together at most NG_TCP_POD_BUDGET bytes (a few stalling pods must not
 * take the node's whole budget from the others), all flows of the agent
 * together at most NG_TCP_BUDGET bytes; past any bound segments are
 * dropped (fail closed: the client retries). */
#ifndef NG_AGENT_TCPFLOW_H
#define NG_AGENT_TCPFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/packet.h"

#define NG_TCP_FLOWS      16
#define NG_TCP_BUDGET     (16u * 1024 * 1024)
#define NG_TCP_POD_BUDGET (512u * 1024)
#define NG_TCP_IDLE_MS    60000
#define NG_TCP_HELD       16 /* query segments held per connection (a query in more ends it) */

struct ng_tcpflow {
	bool used;
	struct ng_ip peer; /* the resolver */
	uint16_t sport, dport;
	uint32_t next; /* next expected sequence number */
	uint8_t *buf;
	uint32_t len, cap;
	int64_t last_ms;
	/* the segment being decided */
	uint32_t undo_len, undo_next, consumed;
	size_t *pod_held; /* its pod's ng_tcpflows.held */
	/* A pod's connection to a resolver (agent/query.c): the segments held
	 * until the message they begin is complete (their queue ids, in
	 * order), the end of what was let through, and whether a refused
	 * query ended it (every later segment of either side is dropped; the
	 * agent answered the pod on `inj_seq`). */
	uint32_t held[NG_TCP_HELD];
	unsigned n_held;
	uint32_t rel;
	bool refused;
	uint32_t inj_seq;
};

struct ng_tcpflows {
	struct ng_tcpflow f[NG_TCP_FLOWS];
	size_t held; /* bytes buffered by these flows */
};

/* The flow of this segment: found, or created on the resolver's SYN-ACK.
 * NULL: no flow and none can be made (drop the segment). */
struct ng_tcpflow *ng_tcp_flow(struct ng_tcpflows *fs, const struct ng_pkt *p, int64_t now_ms);

/* Takes in the segment's new bytes and calls fn for every DNS message it
 * completes. Returns the number of messages completed (hold the segment
 * until they are committed, then ng_tcp_done), 0 (pass it now; already
 * done), or -1 (drop it; already rewound). *budget is the agent-wide
 * buffered byte count. */
typedef void (*ng_tcp_msg_fn)(const uint8_t *msg, size_t len, void *data);
int ng_tcp_segment(struct ng_tcpflow *f, const struct ng_pkt *p, size_t *budget, ng_tcp_msg_fn fn,
		   void *data);

/* The verdict on the held segment: accepted (drop the messages it
 * completed from the buffer) or dropped (rewind). */
void ng_tcp_done(struct ng_tcpflow *f, bool accepted, size_t *budget);

/* Ends a flow (FIN, RST, idle, pod released). */
void ng_tcp_close(struct ng_tcpflow *f, size_t *budget);

#endif
