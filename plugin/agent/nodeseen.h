/* What the node itself saw of one pod's DNS, on the node's side of the
 * pod's link (the host peer), and the one question the learner asks of it:
 * may the node-side table learn from this answer? Pure (no sockets): the
 * observer (agent/observer.h) feeds it the DNS messages it read from NFLOG,
 * the learner asks it about each answer it read from the pod's queue.
 *
 * A pod holding CAP_NET_ADMIN controls everything its own namespace shows
 * the agent: it can loop a forged answer from its egress into its own
 * ingress (tc mirred), where the pod's queue hands it over as if the
 * resolver had sent it. It cannot make the node's host peer transmit a
 * frame towards it. So an answer teaches the node-side table only when:
 *   1. the node saw a query leave the pod across the host peer (after the
 *      host-side table's MAC and source checks): one well-formed standard
 *      query (policy/dnsquery.h), recorded with its flow (protocol, the
 *      pod's address and port, the server's address and port), ID, name
 *      (lowercased: 0x20-randomised case matches) and type;
 *   2. the node saw an answer travel to the pod across the host peer on
 *      the reverse flow, with the same ID, name and type, while that query
 *      was outstanding (not yet answered, younger than NG_SEEN_QUERY_MS):
 *      the query is then answered, and the answer's bytes are kept;
 *   3. the answer the pod's queue holds is byte for byte one of those kept
 *      answers, on the same flow, younger than NG_SEEN_ANSWER_MS.
 * An answer seen by the node that matches no outstanding query (a guessed
 * port, a wrong ID, no query at all, a second answer) is counted and never
 * kept. Bounded: NG_SEEN_QUERIES queries and NG_SEEN_ANSWERS answers of at
 * most NG_SEEN_BYTES bytes in all per pod; the oldest goes first (a pod can
 * only push out its own). Everything lost (an eviction, a message the
 * observer never read) fails closed: the node side does not learn. */
#ifndef NG_AGENT_NODESEEN_H
#define NG_AGENT_NODESEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"
#include "policy/dnsparse.h"

#define NG_SEEN_QUERIES   32
#define NG_SEEN_ANSWERS   16
#define NG_SEEN_BYTES     ((size_t)128 * 1024)
#define NG_SEEN_QUERY_MS  30000 /* a query waits this long for its answer */
#define NG_SEEN_ANSWER_MS 10000 /* a seen answer waits this long for the pod's queue */

/* One DNS exchange's flow, named from the pod's side. */
struct ng_dns_flow {
	uint8_t proto; /* 6 or 17 */
	struct ng_ip pod, server;
	uint16_t pod_port, server_port;
};

struct ng_seen_query {
	bool used;
	struct ng_dns_flow fl;
	uint16_t id, qtype, qclass;
	int64_t at_ms;
	char name[NG_DNS_NAME_LEN];
};

struct ng_seen_answer {
	bool used;
	struct ng_dns_flow fl;
	int64_t at_ms;
	uint8_t *msg;
	size_t len;
};

/* What it counted (exported by the learner as metrics). */
struct ng_seen_counts {
	uint64_t queries;   /* well-formed queries seen leaving */
	uint64_t matched;   /* answers seen arriving that matched an outstanding query */
	uint64_t unmatched; /* answers seen arriving that matched none (never kept) */
	uint64_t evicted;   /* queries or answers pushed out by the bounds, or too big */
};

struct ng_nodeseen {
	struct ng_seen_query q[NG_SEEN_QUERIES];
	struct ng_seen_answer a[NG_SEEN_ANSWERS];
	size_t held; /* bytes of the kept answers */
	struct ng_seen_counts c;
};

/* A query msg[0..len) the node saw leave the pod on flow `fl` at now_ms.
 * True when it was recorded (a well-formed standard query). A repeat of an
 * outstanding one (a retransmission: same flow, ID and question) renews
 * it. */
bool ng_seen_query(struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		   int64_t now_ms);

/* An answer msg[0..len) the node saw travel to the pod on flow `fl`
 * (`scratch`: the parser's ~66 KiB). True when it answered an outstanding
 * query and was kept. */
bool ng_seen_answer(struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		    int64_t now_ms, struct ng_dns_msg *scratch);

/* May the node side learn from the answer msg[0..len) the pod's queue
 * holds on flow `fl`? True when the node saw exactly these bytes, on this
 * flow, answer a query it saw (2. and 3. above). A kept answer stays for
 * NG_SEEN_ANSWER_MS (a retransmitted TCP segment, a dropped verdict's
 * retry are the same bytes again). */
bool ng_seen_vouch(const struct ng_nodeseen *s, const struct ng_dns_flow *fl, const uint8_t *msg, size_t len,
		   int64_t now_ms);

/* Forgets what is older than its bound. */
void ng_seen_expire(struct ng_nodeseen *s, int64_t now_ms);
/* Bytes it holds beyond its struct (the kept answers). */
size_t ng_seen_held(const struct ng_nodeseen *s);
void ng_seen_free(struct ng_nodeseen *s);

#endif
