/* DNS queries a pod sends (dns.queries "listed", README "DNS queries"):
 * the query read without trusting a byte, the policy's decision on it, and
 * the answer the pod gets at once for a query that never leaves. Pure.
 *
 * A query leaves the pod only when it is one well-formed standard query
 * (QR 0, opcode QUERY, exactly one question of class IN, no answer or
 * authority records, at most one additional record and that one an EDNS
 * OPT at the root, nothing after the last section) for a name the pod may
 * ask for: one its name entries match (egress.allow and its grants,
 * wildcards by whole labels, as answers are matched) or dns.alwaysAllowed
 * matches. Names are compared lowercased without the trailing dot; a label
 * byte outside [a-z0-9-_] never matches (policy/dnsparse.h). Any type may
 * be asked for an allowed name. */
#ifndef NG_DNSQUERY_H
#define NG_DNSQUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/dnsparse.h"
#include "policy/policy.h"

/* Why a query does not leave (0: it is well-formed). */
enum ng_dnsq_verdict {
	NG_DNSQ_OK = 0,
	NG_DNSQ_MALFORMED, /* does not parse, or bytes after its sections */
	NG_DNSQ_NOT_QUERY, /* QR set: a response sent to a resolver */
	NG_DNSQ_OPCODE,    /* an opcode other than QUERY (NOTIFY, UPDATE, ...) */
	NG_DNSQ_QDCOUNT,   /* not exactly one question */
	NG_DNSQ_SECTIONS,  /* answer/authority records, or additional ones beyond one OPT */
	NG_DNSQ_CLASS,     /* a question class other than IN */
	NG_DNSQ_UNLISTED,  /* a name the pod may not ask for */
};

struct ng_dns_query {
	uint16_t id, qtype, qclass;
	uint8_t opcode;
	bool rd;
	char name[NG_DNS_NAME_LEN];
	/* The question as sent (name, type, class): echoed verbatim, case
	 * included (0x20-randomising clients compare it), in the refusal. */
	size_t q_off, q_len;
};

/* Parses msg[0..len) as a query; NG_DNSQ_OK or why not. The header and,
 * when it parsed, the question are in *q either way (a refusal needs the
 * ID and the question; the name is "" when the question did not parse). */
enum ng_dnsq_verdict ng_dns_query_parse(const uint8_t *msg, size_t len, struct ng_dns_query *q);

/* May the pod of policy `p` ask for `name`? Its name entries or the
 * platform's dns.alwaysAllowed (ng_policy's dns_always). */
bool ng_dns_query_allowed(const struct ng_policy *p, const char *name);

/* The verdict on one query: parse, then the name. */
enum ng_dnsq_verdict ng_dns_query_judge(const struct ng_policy *p, const uint8_t *msg, size_t len,
					struct ng_dns_query *q);

/* A word for the verdict, for the log and metrics ("unlisted", ...). */
const char *ng_dnsq_verdict_name(enum ng_dnsq_verdict v);

/* Writes into out (cap bytes) the answer a refused query gets at once: the
 * query's ID, QR, its opcode and RD, RA, rcode `rcode` (3 NXDOMAIN or 5
 * REFUSED; a query that is not a QUERY, or has no whole question, gets
 * FORMERR/NOTIMP as fits), the question echoed verbatim, no other
 * records. Returns its length, or 0 when msg has no whole header (nothing
 * can be answered: the query is dropped). */
size_t ng_dns_refusal(const uint8_t *msg, size_t len, const struct ng_dns_query *q, enum ng_dnsq_verdict v,
		      uint8_t rcode, uint8_t *out, size_t cap);

/* A name as the log shows it: cut to `max` bytes with "..." (a refused
 * name may carry data; the log must not become the channel). */
void ng_dns_name_short(const char *name, size_t max, char *out, size_t len);

#endif
