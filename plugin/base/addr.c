#include "base/addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ng_ip_parse(const char *s, struct ng_ip *out)
{
	struct ng_ip ip = {0};

	if (!s || !*s)
		return -1;
	if (inet_pton(AF_INET, s, ip.a) == 1) {
		ip.fam = NG_V4;
	} else if (inet_pton(AF_INET6, s, ip.a) == 1) {
		ip.fam = NG_V6;
	} else {
		return -1;
	}
	*out = ip;
	return 0;
}

void ng_ip_mask(struct ng_ip *ip, unsigned plen)
{
	unsigned bits = ng_ip_bits(ip->fam);

	for (unsigned i = 0; i < bits / 8; i++) {
		unsigned keep = plen > i * 8 ? plen - i * 8 : 0;

		if (keep >= 8)
			continue;
		ip->a[i] &= (uint8_t)(0xff << (8 - keep));
	}
}

int ng_prefix_parse(const char *s, struct ng_prefix *out, const char **why)
{
	const char *dummy;
	char buf[NG_IP_STRLEN];
	const char *slash;
	struct ng_prefix p = {0};
	struct ng_ip masked;

	if (!why)
		why = &dummy;
	if (!s || strlen(s) >= sizeof(buf)) {
		*why = "not an IP address or CIDR";
		return -1;
	}
	slash = strchr(s, '/');
	if (!slash) {
		if (ng_ip_parse(s, &p.ip) < 0) {
			*why = "not an IP address";
			return -1;
		}
		p.plen = (uint8_t)ng_ip_bits(p.ip.fam);
		*out = p;
		return 0;
	}
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (ng_ip_parse(buf, &p.ip) < 0) {
		*why = "not an IP address before '/'";
		return -1;
	}
	/* Prefix length: 1-3 decimal digits, no sign, no spaces. */
	const char *len = slash + 1;
	size_t n = strlen(len);
	if (n == 0 || n > 3 || strspn(len, "0123456789") != n || (n > 1 && len[0] == '0')) {
		*why = "prefix length is not a number";
		return -1;
	}
	unsigned plen = (unsigned)strtoul(len, NULL, 10); /* 1-3 digits, checked above */
	if (plen > ng_ip_bits(p.ip.fam)) {
		*why = "prefix length too long for the address family";
		return -1;
	}
	p.plen = (uint8_t)plen;
	masked = p.ip;
	ng_ip_mask(&masked, plen);
	if (!ng_ip_eq(&masked, &p.ip)) {
		*why = "host bits set under the prefix length";
		return -1;
	}
	*out = p;
	return 0;
}

void ng_ip_format(const struct ng_ip *ip, char *buf, size_t len)
{
	if (!inet_ntop(ip->fam == NG_V4 ? AF_INET : AF_INET6, ip->a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

void ng_prefix_format(const struct ng_prefix *p, char *buf, size_t len)
{
	char ip[NG_IP_STRLEN];

	ng_ip_format(&p->ip, ip, sizeof(ip));
	if (p->plen == ng_ip_bits(p->ip.fam))
		snprintf(buf, len, "%s", ip);
	else
		snprintf(buf, len, "%s/%u", ip, p->plen);
}

int ng_ip_cmp(const struct ng_ip *x, const struct ng_ip *y)
{
	if (x->fam != y->fam)
		return x->fam < y->fam ? -1 : 1;
	return memcmp(x->a, y->a, ng_ip_len(x->fam));
}

bool ng_ip_eq(const struct ng_ip *x, const struct ng_ip *y)
{
	return ng_ip_cmp(x, y) == 0;
}

void ng_prefix_first(const struct ng_prefix *p, struct ng_ip *out)
{
	*out = p->ip;
	ng_ip_mask(out, p->plen);
}

void ng_prefix_last(const struct ng_prefix *p, struct ng_ip *out)
{
	unsigned bits = ng_ip_bits(p->ip.fam);

	*out = p->ip;
	for (unsigned i = 0; i < bits / 8; i++) {
		unsigned keep = p->plen > i * 8 ? p->plen - i * 8 : 0;

		if (keep >= 8)
			continue;
		out->a[i] |= (uint8_t)(0xff >> keep);
	}
}

bool ng_prefix_contains_ip(const struct ng_prefix *p, const struct ng_ip *ip)
{
	struct ng_ip m;

	if (ip->fam != p->ip.fam)
		return false;
	m = *ip;
	ng_ip_mask(&m, p->plen);
	return ng_ip_eq(&m, &p->ip);
}

bool ng_prefix_contains(const struct ng_prefix *outer, const struct ng_prefix *inner)
{
	return outer->ip.fam == inner->ip.fam && outer->plen <= inner->plen &&
	       ng_prefix_contains_ip(outer, &inner->ip);
}

bool ng_ip_inc(struct ng_ip *ip)
{
	for (int i = (int)ng_ip_len(ip->fam) - 1; i >= 0; i--) {
		if (++ip->a[i] != 0)
			return true;
	}
	return false;
}

bool ng_ip_dec(struct ng_ip *ip)
{
	for (int i = (int)ng_ip_len(ip->fam) - 1; i >= 0; i--) {
		if (ip->a[i]-- != 0)
			return true;
	}
	return false;
}
