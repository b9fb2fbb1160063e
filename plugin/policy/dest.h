/* Destination entries: `[tcp|udp://]HOST:PORT[-PORT]`, as used by
 * egress.allow, egress.envelope and the netguard.boxxkite.io/egress
 * annotation. HOST is an IPv4 address or CIDR, a bracketed IPv6 address or
 * CIDR, a DNS name, or (envelope only) `*.suffix`. Parsing is pure. */
#ifndef NG_DEST_H
#define NG_DEST_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "base/vec.h"

#define NG_PROTO_TCP 6
#define NG_PROTO_UDP 17

#define NG_NAME_MAX      253 /* RFC 1035 presentation length, no trailing dot */
#define NG_DEST_TEXT_MAX 300

enum ng_host_kind {
	NG_HOST_PREFIX,   /* an address or CIDR */
	NG_HOST_NAME,     /* a DNS name, resolved at ADD */
	NG_HOST_WILDCARD, /* `*.suffix`: one or more whole labels before suffix */
};

struct ng_dest {
	enum ng_host_kind kind;
	uint8_t proto; /* NG_PROTO_TCP or NG_PROTO_UDP */
	uint16_t port_lo, port_hi;
	struct ng_prefix net;        /* NG_HOST_PREFIX */
	char name[NG_DEST_TEXT_MAX]; /* NAME: the name; WILDCARD: the suffix (<= 253) */
	char text[NG_DEST_TEXT_MAX]; /* the entry as written, for messages */
};

typedef NG_VEC(struct ng_dest) ng_dest_vec;

/* Parses one entry. `wildcard_ok` admits `*.suffix` (envelope only).
 * On error fills err with code `code` and a message naming the entry. */
int ng_dest_parse(const char *s, bool wildcard_ok, int code, struct ng_dest *out, struct ng_err *err);

/* True when every destination of `inner` is a destination of `outer`:
 * same protocol, port range inside, and CIDR inside CIDR or name equal to,
 * or below, the outer name / wildcard suffix (whole labels). A name is never
 * inside a CIDR and an address never inside a name: the envelope is checked
 * as written, not through DNS. */
bool ng_dest_within(const struct ng_dest *inner, const struct ng_dest *outer);

/* Is `name` equal to, or a whole-label descendant of, `suffix`? With
 * strict, equality does not count (a wildcard needs one more label). */
bool ng_name_under(const char *name, const char *suffix, bool strict);

/* Does the (lowercase, no trailing dot) DNS name `name` fall under the
 * name or wildcard entry `d`? Wildcards match one or more whole labels in
 * front of the suffix, never the suffix itself. */
bool ng_dest_matches_name(const struct ng_dest *d, const char *name);

/* Validates and lowercases a DNS name in place (strips one trailing dot).
 * Returns NULL when valid, else a reason. */
const char *ng_dns_name_check(char *name);

const char *ng_proto_name(uint8_t proto);

#endif
