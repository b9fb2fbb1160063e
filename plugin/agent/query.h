/* The pod's DNS queries (README "DNS queries"): its egress chain queues
 * every packet to a resolver's port 53 (nft/render.c), and here each query
 * is judged (policy/dnsquery.h). An allowed one goes on and is remembered
 * as outstanding (agent/outq.h: only its answer may teach); a refused one
 * never leaves: the agent answers it at once in the pod's namespace, as
 * the resolver would (NXDOMAIN or REFUSED, same ID, question echoed).
 *
 * UDP: the datagram is dropped and the answer written to the pod's socket
 * (from the resolver's address and port 53 to the query's source port).
 * TCP: every message on the connection is judged, pipelined ones too; a
 * segment that leaves a message incomplete is held (no verdict) until the
 * segment completing it is judged, so no byte of a refused message ever
 * leaves. A refused message ends the connection: the segments holding it
 * are dropped, the resolver's side is reset (nothing of the query), and
 * the pod's side gets the refusal as the next message on the stream, then
 * a FIN: the client reads its answer at once and sees the connection
 * closed (messages pipelined after the refused one, and answers still
 * due, are not delivered: the client asks again on a new connection).
 * Splicing the stream instead (sending on the resolver's side the bytes
 * of allowed messages only) would need a TCP proxy. */
#ifndef NG_AGENT_QUERY_H
#define NG_AGENT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/packet.h"
#include "agent/pod.h"

/* "No verdict yet": the packet is held in the queue. */
#define NG_VERDICT_HELD UINT32_MAX

/* The verdict on a query packet `k` (queue id `id`) the pod sends to one
 * of its resolvers: NF_ACCEPT, NF_DROP, or NG_VERDICT_HELD (given later, by
 * this module). */
uint32_t ng_query_packet(struct ng_pod *p, struct ng_pod_shared *sh, const struct ng_pkt *k, uint32_t id);

/* Does answer msg[0..len) in packet `k` (from a resolver to the pod)
 * answer an outstanding query? The query is then no longer outstanding
 * (its key in *taken, for ng_outq_add should the answer be dropped after
 * all). Counted when not. */
bool ng_query_answered(struct ng_pod *p, const struct ng_pkt *k, const uint8_t *msg, size_t len,
		       struct ng_outq_key *taken);

/* Is `k` (from a resolver) a segment of a connection a refusal ended? */
bool ng_query_flow_ended(const struct ng_pod *p, const struct ng_pkt *k);

/* Once a second: outstanding queries past their time, idle connections
 * (their held segments dropped). */
void ng_query_sweep(struct ng_pod *p, struct ng_pod_shared *sh, int64_t now_ms);

#endif
