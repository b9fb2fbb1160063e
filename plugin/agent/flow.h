/* The flow thread: the node-wide flow log (`observe`) and the agent's
 * local socket (stateDir/agent.sock, kernel/unixsock.h).
 *
 * What it reads (node/flowsrc.h): every enforced pod's NFLOG group in
 * the pod's own namespace (its inet table and guard log there), the
 * node's namespace for every host-side table, each table's log_skipped
 * counter while the table logs, and the DNS queries the learner refused
 * (agent/flowq.h). The pods come from the ops thread, which reads the
 * records (ng_flow_set_pods); a pod's sockets close when it leaves that
 * list (its record gone, its namespace gone): no socket here keeps a
 * deleted pod's namespace alive for longer than the ops thread's next
 * view (at most a second).
 *
 * Where it goes: a ring of the node's last NG_FLOW_RING events
 * (agent/flowring.h) and every connected client (agent/flowclient.h,
 * agent/flowserve.h), each a cursor into the ring. Bounded: the ring, NG_FLOW_CLIENTS clients
 * of at most NG_FLOWCLIENT_OUT bytes each, NG_FLOW_READ messages per
 * socket per turn (a pod logging to its group with rules of its own, or a
 * flood, waits for its own turn), the kernel's socket buffers. Nothing
 * here is waited for by the learner or the ops thread: they hand over
 * copies under a mutex held for a copy (pods) or through a lock-free
 * queue that drops when full (refused queries).
 *
 * The thread runs at nice +10, as the keep-alive thread does: a flood it
 * reads competes with the learner's answers for the CPU and loses.
 *
 * Why a thread of its own and one socket per pod: NFLOG delivers in the
 * namespace where the packet was logged, and a group binding belongs to
 * the namespace its socket was made in (the observer's facts, agent
 * notes); reading them on the learner's loop would put every pod's log
 * between a pod's DNS answer and its verdict. */
#ifndef NG_AGENT_FLOW_H
#define NG_AGENT_FLOW_H

#include <stddef.h>

#include "agent/flowserve.h"
#include "base/err.h"
#include "node/flowsrc.h"

#define NG_FLOW_READ 64 /* NFLOG messages read per socket per turn */

struct ng_flow;

/* Starts the thread, listening on stateDir/agent.sock. -1 with err. */
int ng_flow_start(const char *state_dir, struct ng_flow **out, struct ng_err *err);
/* Stops it (clients disconnected, sockets closed). NULL: nothing. */
void ng_flow_stop(struct ng_flow *f);

/* The ops thread: every enforced pod it watches (copied; the thread opens
 * and closes sockets to match). */
void ng_flow_set_pods(struct ng_flow *f, const struct ng_flow_pod *pods, size_t n);
/* The learner's queue of refused DNS queries. */
struct ng_flowq *ng_flow_queue(struct ng_flow *f);

/* Set once the ops thread runs; NULL fn before it stops. */
void ng_flow_set_names(struct ng_flow *f, ng_flow_names_fn fn, void *data);

#endif
