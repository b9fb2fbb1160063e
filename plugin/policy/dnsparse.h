/* The project's one DNS message parser (RFC 1035 wire format), for the
 * answers the node's resolver gives ADD ("resolve" mode) and the answers the
 * agent reads from each pod's queue ("learn" mode). Pure and allocation-free
 * (the caller owns the message struct), so it is unit-tested and fuzzed on
 * its own.
 *
 * Why our own and not glibc's ns_initparse/ns_parserr: those accept forward
 * compression pointers, expand every name into a 1025-byte buffer, re-walk
 * from the start for random access, and leave case folding and label
 * escaping to the caller; we need one pass, whole-label matching of
 * lowercased names and a hard bound on everything an answer can make us do.
 * The rules here:
 *   - compression pointers must point strictly before every earlier jump
 *     target of the same name (so they always go backward and cannot loop)
 *     and never into the header, at most NG_DNS_MAX_JUMPS of them per name
 *     (backward alone still lets a 64 KiB message chain thousands: 44 ms
 *     to parse one); reserved label types are malformed;
 *   - a name is at most 255 wire bytes; label bytes outside [a-z0-9-_] are
 *     kept as '?', so they can never match a configured name yet keep
 *     their label boundaries ("a.b" inside one label is not two labels);
 *   - exactly one question; only the answer section is read (authority and
 *     additional records are never trusted); at most NG_DNS_MAX_RRS answer
 *     records are kept, the rest are ignored (their addresses not learned);
 *   - A must have 4 bytes of rdata, AAAA 16, a CNAME's target must end
 *     exactly at its rdata's end; anything else is a malformed message. */
#ifndef NG_DNSPARSE_H
#define NG_DNSPARSE_H

#include <stdbool.h>
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

#define NG_DNS_MAX_RRS   128 /* answer records kept per message */
#define NG_DNS_MAX_NAMES (2 * NG_DNS_MAX_RRS + 1)
#define NG_DNS_NAME_LEN  256 /* presentation form + NUL */
#define NG_DNS_MAX_CHAIN 16  /* CNAME links followed from the question */
/* Compression pointers followed in one name: a name has at most 127
 * labels, and a compressor points once per name (its suffix may point
 * once more); past this the message is malformed. */
#define NG_DNS_MAX_JUMPS 32

#define NG_DNS_T_A     1
#define NG_DNS_T_CNAME 5
#define NG_DNS_T_AAAA  28

struct ng_dns_rr {
	uint16_t type;   /* NG_DNS_T_A, _AAAA or _CNAME (others are not kept) */
	uint16_t owner;  /* index into names */
	uint16_t target; /* CNAME: index into names */
	uint32_t ttl;    /* seconds; RFC 2181 8: top bit set reads as 0 */
	struct ng_ip ip; /* A, AAAA */
};

struct ng_dns_msg {
	uint16_t id, rcode;
	bool truncated; /* TC: the client will ask again over TCP */
	bool capped;    /* more than NG_DNS_MAX_RRS answers: the rest ignored */
	uint16_t qtype, qclass;
	uint16_t n_rrs, n_names;
	struct ng_dns_rr rrs[NG_DNS_MAX_RRS];
	char names[NG_DNS_MAX_NAMES][NG_DNS_NAME_LEN]; /* [0]: the question */
};

/* Decodes the name at *off of message msg[0..len) into out (lowercase,
 * no trailing dot, "" for the root; bytes outside [a-z0-9-_] as '?') and
 * moves *off past it. -1 when malformed (see the rules above). */
int ng_dns_name_read(const uint8_t *msg, size_t len, size_t *off, char out[NG_DNS_NAME_LEN]);

/* Parses a response. 0, or -1 when it is not a well-formed standard-query
 * response with one question. `m` is overwritten either way. */
int ng_dns_parse(const uint8_t *msg, size_t len, struct ng_dns_msg *m);

/* The names reachable from the question through CNAME records of the
 * answer section (the question first, loops and chains longer than
 * NG_DNS_MAX_CHAIN not followed), as indexes into m->names, with the
 * smallest TTL along the way to each (UINT32_MAX for the question). */
struct ng_dns_chain {
	unsigned n;
	uint16_t name[NG_DNS_MAX_CHAIN + 1];
	uint32_t ttl[NG_DNS_MAX_CHAIN + 1];
};
void ng_dns_chain(const struct ng_dns_msg *m, struct ng_dns_chain *c);

/* The index in c of the chain name equal to m->names[name], or -1: an
 * address record answers the question only when its owner is on the chain. */
int ng_dns_chain_find(const struct ng_dns_msg *m, const struct ng_dns_chain *c, uint16_t name);

/* For every chain name `on`, marks in by[on] the chain names whose
 * addresses `on`'s are: `on` itself and every chain name that is an alias
 * of it through the answer's CNAME records (directly or over other chain
 * names). An address record of `on` answers for those names only: a
 * question's own records never answer for a name it is an alias of
 * (q CNAME allowed, q A x: x is q's address, not allowed's). The names are
 * compared once per CNAME record, then only indexes: an answer built to
 * make this slow (16 links, 128 records) costs microseconds. */
typedef bool ng_dns_aliases[NG_DNS_MAX_CHAIN + 1][NG_DNS_MAX_CHAIN + 1];
void ng_dns_chain_aliases(const struct ng_dns_msg *m, const struct ng_dns_chain *c, ng_dns_aliases by);

/* ADD-time resolution: appends every A (qtype 1) or AAAA (28) record of
 * the answer that lies on the question's chain to `out`. Returns the number
 * added, or -1 for a malformed message. */
int ng_dns_parse_answers(const uint8_t *msg, size_t len, uint16_t qtype, struct ng_resolved_name *out);

#endif
