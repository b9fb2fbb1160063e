/* The queries a pod sent that are not answered yet (issue 19 item 3): an
 * answer teaches only when it answers one of them (the same resolver,
 * transport, pod port, DNS ID and question, name compared without regard
 * to ASCII case), and it answers it once (the entry goes). Pure: no
 * socket, no clock (the caller passes the time), reusable by any observer
 * of queries and answers (the pod's queue, a node-side observer).
 *
 * Bounded: NG_OUTQ_MAX entries per pod (NG_OUTQ_MAX * sizeof(struct
 * ng_outq_slot), about 38 KiB, allocated at the first query), each kept at
 * most NG_OUTQ_TTL_MS. When full, the oldest entry makes room (counted:
 * its answer, if it still comes, passes unlearned). A stub resolver has
 * two queries in flight per lookup (A and AAAA); 128 are 64 lookups at
 * once. */
#ifndef NG_AGENT_OUTQ_H
#define NG_AGENT_OUTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"

#define NG_OUTQ_MAX    128
#define NG_OUTQ_TTL_MS 10000
#define NG_OUTQ_QLEN   (255 + 4) /* a question: the name in wire form, type, class */

struct ng_outq_key {
	struct ng_ip resolver;
	uint8_t proto;           /* 17 or 6 */
	uint16_t port;           /* the pod's port (the resolver's is 53) */
	uint16_t id;             /* the DNS ID */
	uint16_t qlen;           /* bytes of q */
	uint8_t q[NG_OUTQ_QLEN]; /* the question as sent, A-Z lowercased */
};

struct ng_outq_slot {
	bool used;
	int64_t at_ms;
	struct ng_outq_key k;
};

struct ng_outq {
	struct ng_outq_slot *v; /* NG_OUTQ_MAX slots, or NULL before the first query */
	unsigned n;             /* slots used */
};

/* The key of DNS message msg[0..len) (a query or its answer) between the
 * pod's `port` and `resolver` over `proto`: its ID and its one question,
 * which must be written out whole at offset 12 (no compression pointer:
 * a resolver echoes the question as it was asked). -1 when it has none. */
int ng_outq_key_of(const uint8_t *msg, size_t len, const struct ng_ip *resolver, uint8_t proto, uint16_t port,
		   struct ng_outq_key *k);

/* Remembers a query sent at now_ms. 0: remembered; 1: remembered, the
 * oldest entry gone to make room (the bound was hit); -1: out of memory
 * (not remembered). The same key again (a retransmission) only renews
 * its time. */
int ng_outq_add(struct ng_outq *q, const struct ng_outq_key *k, int64_t now_ms);

/* Does an answer with key k answer a remembered query, sent no more than
 * NG_OUTQ_TTL_MS before now_ms? If so the entry goes (one answer per
 * query) and true. */
bool ng_outq_take(struct ng_outq *q, const struct ng_outq_key *k, int64_t now_ms);

/* Forgets what is older than NG_OUTQ_TTL_MS; returns how many went. */
unsigned ng_outq_expire(struct ng_outq *q, int64_t now_ms);

void ng_outq_free(struct ng_outq *q);

#endif
