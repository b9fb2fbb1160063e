/* Policy -> nftables batch. The ruleset's shape is fixed here, in one place,
 * in the order of guide section 2; the policy only fills the sets. Two
 * tables of the same name: inet (the policy) and, with rawPacketGuard,
 * netdev (the same egress sets on the pod's interface, for packet sockets
 * that never pass the inet hooks). One transaction creates or replaces
 * both (create-if-missing, delete, create anew), so a retried ADD converges
 * and a failed one leaves the previous state (usually: nothing). */
#ifndef NG_RENDER_H
#define NG_RENDER_H

#include "nft/batch.h"
#include "base/err.h"
#include "policy/policy.h"

#define NG_TABLE "boxxkite_netguard"

/* Names of the objects in the table (shared with CHECK, stats, tests). */
#define NG_CHAIN_EGRESS          "egress"
#define NG_CHAIN_INGRESS         "ingress"
#define NG_CHAIN_REFUSE_METADATA "refuse_metadata"
#define NG_CHAIN_REFUSE_EGRESS   "refuse_egress"
#define NG_CHAIN_REFUSE_INGRESS  "refuse_ingress"
#define NG_CHAIN_REFUSE_SOURCE   "refuse_source"
#define NG_COUNTER_SOURCE        "source_denied"
#define NG_COUNTER_METADATA      "metadata_denied"
#define NG_COUNTER_EGRESS        "egress_denied"
#define NG_COUNTER_INGRESS       "ingress_denied"
/* DNS-name destinations: names_vX is constant and holds the addresses
 * resolved at ADD; names_vX_ttl holds the same with their DNS lifetimes. A
 * packet must be in both: the first makes hand-added elements useless, the
 * second makes addresses expire. */
#define NG_SET_NAMES_V4          "names_v4"
#define NG_SET_NAMES_V6          "names_v6"
#define NG_TTL_SUFFIX            "_ttl"
/* egress.names "learn": names_vX is a hash set (address . proto . port,
 * with timeouts) the agent fills from the pod's DNS answers, and
 * names_vX_ranges the interval set for entries with a port range. */
#define NG_RANGES_SUFFIX         "_ranges"
/* ... and the pod's DNS answers are queued to the agent before any other
 * input chain sees them: NFQUEUE number NG_AGENT_QUEUE in the pod's own
 * namespace (a queue binding belongs to a namespace), without the bypass
 * flag, so with no agent the answers are dropped. */
#define NG_CHAIN_DNS_ANSWERS     "dns_answers"
#define NG_DNS_ANSWERS_PRIORITY  (-10)
#define NG_AGENT_QUEUE           5353
/* The node-side observer (agent/observer.h): the host-side table of a
 * learning pod logs, to this NFLOG group of the node's namespace, every DNS
 * query the pod sends past its MAC and source checks and every DNS answer
 * the node sends it (whole, up to NG_OBSERVE_SNAPLEN bytes, one message
 * per packet): the node side learns only from answers the node saw. A copy,
 * never a verdict: nothing on the data path waits for the agent here.
 * (NG_OBSERVE_GROUP: policy/config.h; log.nflogGroup may not be it). */
#define NG_OBSERVE_SNAPLEN       65000
/* The packet-socket guard: table netdev NG_TABLE (same name, other family). */
#define NG_RAW_CHAIN_EGRESS      "egress"
#define NG_RAW_CHAIN_V4          "raw_v4"
#define NG_RAW_CHAIN_V6          "raw_v6"
#define NG_RAW_CHAIN_REFUSE      "refuse_raw"
#define NG_COUNTER_RAW           "raw_denied"

/* Appends the messages that create table `b->table` holding `p`, failing
 * (EEXIST on the first message) if the table exists. The first ADD of a pod
 * sends this: no delete, so the kernel has nothing to destroy, and closing
 * the socket does not wait out an RCU grace period (~11 ms). */
int ng_render_create(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err);

/* Appends the messages that replace table `b->table` with `p`, whatever is
 * there (create-if-missing, delete, create): a retried ADD. */
int ng_render_replace(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err);

/* Appends the messages that remove table `b->table` if it exists (create
 * then delete, one transaction: no "get then delete" race). */
int ng_render_delete(struct ng_batch *b, struct ng_err *err);

#endif
