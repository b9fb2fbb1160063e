/* The sets of the ruleset: their key layout (which fields, how they are
 * padded into 4-byte register words, nft's type numbers) and how one set and
 * its elements become NEWSET/NEWSETELEM messages. */
#ifndef NG_RENDER_SETS_H
#define NG_RENDER_SETS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "nft/batch.h"
#include "policy/policy.h"

enum ng_set_kind {
	NG_SK_ADDR,            /* ipv4_addr / ipv6_addr */
	NG_SK_ADDR_PROTO_PORT, /* addr . inet_proto . inet_service */
	NG_SK_ADDR_PORT,       /* addr . inet_service */
	NG_SK_ADDR_ICMP6,      /* ipv6_addr . icmpv6_type */
};

struct ng_set_spec {
	const char *name;
	const ng_ip_vec *ips;     /* NG_SK_ADDR */
	const ng_elem_vec *elems; /* the others */
	enum ng_set_kind kind;
	uint32_t id; /* assigned by ng_set_render */
	uint8_t fam;
	bool interval, timeout;
	/* The name sets: their contents come from DNS, which CHECK does not
	 * ask, so their definition must not depend on them (no size hint). */
	bool from_dns;
	/* egress.names "learn": a name set the agent fills (hash or interval,
	 * with timeouts, no elements at ADD). */
	bool learned;
	/* NG_SK_ADDR (IPv6) only, when set: the keys are 16 raw bytes of the
	 * network header, `typeof @nh,<nh_bits>,128` (an integer key), for
	 * rules that look them up at offsets no address field has (MLD's
	 * groups, nft/render_mld.h): nft reads such a rule back through
	 * `nft -f` only against a key of that type. */
	uint16_t nh_bits;
	/* When set, each element carries the comment "until <UTC>" of
	 * expires_base + its timeout (the pinned name sets). */
	time_t expires_base;
};

#define NG_EXPIRY_PREFIX "until "
/* A pinned element's comment in "resolve" mode: the name it answered. */
#define NG_NAME_PREFIX   "name "

/* The pinned name sets' element comment ("until 2026-11-29T10:37:42Z"),
 * and back (0 when the comment is not one). */
int ng_expiry_format(time_t t, char *buf, size_t len);
time_t ng_expiry_parse(const char *comment);

/* Appends NEWSET and its NEWSETELEM messages; assigns s->id. 0 or -1 (ENOMEM). */
int ng_set_render(struct ng_batch *b, struct ng_set_spec *s);

/* The element whose key (and key end, for interval sets) the kernel
 * reported, for a set of kind NG_SK_ADDR_PROTO_PORT. 0, or -1 when the key
 * does not have the set's layout. */
int ng_set_key_decode(const struct ng_set_spec *s, const uint8_t *key, uint32_t klen, const uint8_t *end,
		      uint32_t elen, struct ng_elem *out);

/* Appends `type` (NFT_MSG_NEWSETELEM or NFT_MSG_DELSETELEM) messages for
 * `elems` to the existing set s->name of table b->table (family b->family),
 * each element with its timeout when the set has timeouts: the agent's
 * updates of the learned name sets. 0 or -1 (ENOMEM). */
int ng_set_elems_render(struct ng_batch *b, const struct ng_set_spec *s, const ng_elem_vec *elems,
			uint16_t type);

#endif
