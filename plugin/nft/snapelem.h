/* Set element keys in nft's own syntax, for people: CHECK and verify name a
 * changed element as `10.30.1.0/24 . tcp . 443`, as `nft list set` shows
 * it, not as the 24 hex digits of the kernel's key. The comparison itself
 * stays on the exact bytes (snapshot lines): this only words it. */
#ifndef NG_SNAPELEM_H
#define NG_SNAPELEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nft/snapshot.h"

/* nftables' data type ids (its datatype.h), 6 bits each in a set's key
 * type: a concatenation `ipv4_addr . inet_proto . inet_service` is
 * (7 << 12) | (12 << 6) | 13. */
enum ng_nft_type {
	NG_TYPE_IPADDR = 7,
	NG_TYPE_IP6ADDR = 8,
	NG_TYPE_INET_PROTOCOL = 12,
	NG_TYPE_INET_SERVICE = 13,
	NG_TYPE_ICMP6_TYPE = 29,
};

/* Formats an element of a set of key type `keytype`: its key, and for an
 * interval set its key end, field by field (a field whose start and end
 * agree is one value; an address range that is a prefix is ADDR/LEN; any
 * other range LO-HI). `lens` (n_lens bytes, the set's concat field
 * lengths) may be NULL: then each type's own length is used. False, with
 * out untouched, when the key does not fit the layout. */
bool ng_elem_text(uint32_t keytype, const uint8_t *lens, size_t n_lens, const uint8_t *key, uint32_t klen,
		  const uint8_t *end, uint32_t elen, char *out, size_t len);

/* A snapshot line "set NAME element HEX[ - HEX] flags F" rewritten as
 * "set NAME element TEXT flags F", the layout taken from the set's own line
 * in `a` or else `b`. False, out untouched, for any other line or an
 * unknown layout. */
bool ng_elem_line_text(const struct ng_snapshot *a, const struct ng_snapshot *b, const char *line, char *out,
		       size_t len);

#endif
