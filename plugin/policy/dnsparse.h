/* Parsing of a DNS response (RFC 1035 wire format) for A/AAAA records and
 * their TTLs. Pure, so it is unit-tested and fuzzed on its own; the resolver
 * (resolve.c) only fetches the bytes. */
#ifndef NG_DNSPARSE_H
#define NG_DNSPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/vec.h"
#include "policy/dest.h"

/* The addresses one name resolved to, with their TTLs. */
struct ng_answer {
	struct ng_ip ip;
	uint32_t ttl;
};
struct ng_resolved_name {
	char name[NG_DEST_TEXT_MAX];
	NG_VEC(struct ng_answer) answers;
};

/* Appends every answer record of type `qtype` (1 = A, 28 = AAAA) in the
 * answer section to `out` (CNAME chains are followed implicitly: the
 * records for the final target are in the same answer section). Returns the
 * number of records added, or -1 for a malformed message. */
int ng_dns_parse_answers(const uint8_t *msg, size_t len, uint16_t qtype, struct ng_resolved_name *out);

#endif
