/* The node agent (`boxxkite-netguard agent`): learns each pod's DNS-name
 * destinations from the pod's own answers (README "The node agent") and
 * watches every enforced pod's tables for drift.
 *
 * The main thread, one epoll loop (agent.c): the records in stateDir/pods,
 * a once-a-second sweep, a signal, and each learning pod's queue
 * (agent/learner.h: its pods; agent/answer.h: from an answer to its
 * verdict). Nothing else: the ops thread (agent/ops.h) does everything
 * that may take long (dumps, CHECKs, repairs, the node view), the HTTP
 * thread (agent/http.h) serves --listen, the keep-alive thread
 * (agent/keepalive.h) looks up live connections in conntrack. */
#ifndef NG_AGENT_H
#define NG_AGENT_H

int ng_agent_main(int argc, char **argv);

#endif
