/* IP addresses and prefixes as plain values. IPv4 and IPv6 share one type so
 * that range arithmetic (set normalisation, containment) is written once:
 * the address bytes are network order, IPv4 in the first 4 bytes. */
#ifndef NG_ADDR_H
#define NG_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NG_V4 4
#define NG_V6 6

struct ng_ip {
	uint8_t fam; /* NG_V4 or NG_V6 */
	uint8_t a[16];
};

struct ng_prefix {
	struct ng_ip ip; /* network address (host bits zero) */
	uint8_t plen;
};

/* Longest textual forms, with room for a prefix length. */
#define NG_IP_STRLEN 64

static inline size_t ng_ip_len(uint8_t fam)
{
	return fam == NG_V4 ? 4 : 16;
}

static inline unsigned ng_ip_bits(uint8_t fam)
{
	return fam == NG_V4 ? 32 : 128;
}

/* Parses a bare IPv4 or IPv6 address (no brackets, no prefix). Strict:
 * inet_pton's rules (no leading zeros in IPv4, no zone index). */
int ng_ip_parse(const char *s, struct ng_ip *out);

/* Parses "ADDR" or "ADDR/LEN". A bare address is a host prefix. Refuses
 * host bits set under the mask ("10.1.2.3/8"): such an entry is ambiguous
 * and a reviewer should not have to guess what it meant. Returns 0, or -1
 * with a reason in why (which may be NULL). */
int ng_prefix_parse(const char *s, struct ng_prefix *out, const char **why);

void ng_ip_format(const struct ng_ip *ip, char *buf, size_t len);
void ng_prefix_format(const struct ng_prefix *p, char *buf, size_t len);

int ng_ip_cmp(const struct ng_ip *x, const struct ng_ip *y);
bool ng_ip_eq(const struct ng_ip *x, const struct ng_ip *y);

/* First and last address of a prefix. */
void ng_prefix_first(const struct ng_prefix *p, struct ng_ip *out);
void ng_prefix_last(const struct ng_prefix *p, struct ng_ip *out);

bool ng_prefix_contains_ip(const struct ng_prefix *p, const struct ng_ip *ip);
bool ng_prefix_contains(const struct ng_prefix *outer, const struct ng_prefix *inner);

/* ip + 1 / ip - 1 within the family; returns false on wrap-around. */
bool ng_ip_inc(struct ng_ip *ip);
bool ng_ip_dec(struct ng_ip *ip);

/* Applies a prefix mask in place (zeroes host bits). */
void ng_ip_mask(struct ng_ip *ip, unsigned plen);

#endif
