/* Cloud metadata endpoints: the built-in list with its sources, the
 * operator's metadata.extra, every IPv6 form that can carry one of the IPv4
 * addresses, and the check that refuses any allow entry, grant, DNS server
 * or DNS answer reaching one of them (README "Cloud metadata"). */
#ifndef NG_METADATA_H
#define NG_METADATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "policy/config.h"

/* An IPv6 form whose addresses carry an IPv4 address at fixed bytes, and
 * which a translator or tunnel on the path may deliver to that IPv4
 * address. An address A is form F of IPv4 address V when
 * (A & F.mask) == ng_v6_form_embed(F, V): the fixed bits of the form and
 * V's four bytes at F.pos match; every other bit is free (an operator's
 * prefix bits, a suffix, a Teredo server or port). */
struct ng_v6_form {
	const char *name; /* and its RFC, for messages and rule comments */
	uint8_t value[16];
	uint8_t mask[16];
	uint8_t pos[4]; /* byte offsets of V's bytes 0..3 */
	bool inverted;  /* Teredo stores the client address complemented */
	bool anywhere;  /* ISATAP: under any /64, so config refuses only entries longer than /64 */
};

/* The forms with free bits (single-address forms go into cfg->metadata). */
#define NG_V6_FORMS 7
extern const struct ng_v6_form ng_v6_forms[NG_V6_FORMS];

/* Form `f` of IPv4 address `v4`, with the free bits zero. */
void ng_v6_form_embed(const struct ng_v6_form *f, const struct ng_ip *v4, struct ng_ip *out);

/* Appends the built-in cloud metadata addresses and the single-address
 * IPv6 forms of the IPv4 ones (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, NAT64 well-known prefix) to `cfg->metadata`, once each. */
int ng_config_builtin_metadata(struct ng_config *cfg, struct ng_err *err);

/* The "metadata" key: the built-in list, then metadata.extra with its forms. */
int ng_metadata_parse(const json_t *root, struct ng_config *cfg, struct ng_err *err);

/* Is `ip` an IPv6 form (any of NG_V6_FORMS, whatever its free bits) of
 * one of the IPv4 addresses v4[0..n)? (A DNS answer naming one is never
 * learned.) */
bool ng_ip_is_metadata_form(const struct ng_ip *ip, const struct ng_ip *v4, size_t n);

/* Fails when any metadata address, or any form of an IPv4 one, lies inside
 * `p` (any port). `what` names the entry in the message. */
int ng_check_not_metadata(const struct ng_config *cfg, const struct ng_prefix *p, const char *what, int code,
			  struct ng_err *err);

#endif
