#include "nft/snapelem.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 8
#define MAX_KEY    64 /* bytes: the kernel's NFT_DATA_VALUE_MAXLEN */

/* The length of one value of a type, where the type fixes it. */
static unsigned type_len(unsigned t)
{
	switch (t) {
	case NG_TYPE_IPADDR: return 4;
	case NG_TYPE_IP6ADDR: return 16;
	case NG_TYPE_INET_PROTOCOL: return 1;
	case NG_TYPE_INET_SERVICE: return 2;
	case NG_TYPE_ICMP6_TYPE: return 1;
	default: return 0;
	}
}

/* nft prints these protocol numbers and ICMPv6 types by name. */
static const char *proto_name(unsigned p)
{
	switch (p) {
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 33: return "dccp";
	case 58: return "ipv6-icmp";
	case 132: return "sctp";
	case 136: return "udplite";
	default: return NULL;
	}
}

static const char *icmp6_name(unsigned t)
{
	static const char *const nd[] = {"nd-router-solicit", "nd-router-advert", "nd-neighbor-solicit",
					 "nd-neighbor-advert", "nd-redirect"};

	return t >= 133 && t <= 137 ? nd[t - 133] : NULL;
}

/* One value of type t, fl bytes at p, appended to out. */
static void put_value(unsigned t, const uint8_t *p, unsigned fl, char *out, size_t len)
{
	size_t o = strlen(out);
	char a[INET6_ADDRSTRLEN] = "?";
	const char *name = NULL;

	if ((t == NG_TYPE_IPADDR && fl == 4) || (t == NG_TYPE_IP6ADDR && fl == 16)) {
		if (!inet_ntop(t == NG_TYPE_IPADDR ? AF_INET : AF_INET6, p, a, sizeof(a)))
			snprintf(a, sizeof(a), "?");
		snprintf(out + o, len - o, "%s", a);
		return;
	}
	if (t == NG_TYPE_INET_SERVICE && fl == 2) {
		snprintf(out + o, len - o, "%u", (unsigned)p[0] << 8 | p[1]);
		return;
	}
	if (t == NG_TYPE_INET_PROTOCOL && fl == 1)
		name = proto_name(p[0]);
	if (t == NG_TYPE_ICMP6_TYPE && fl == 1)
		name = icmp6_name(p[0]);
	if (name || fl == 1) {
		if (name)
			snprintf(out + o, len - o, "%s", name);
		else
			snprintf(out + o, len - o, "%u", p[0]);
		return;
	}
	snprintf(out + o, len - o, "0x");
	for (unsigned i = 0; i < fl; i++) {
		o = strlen(out);
		snprintf(out + o, len - o, "%02x", p[i]);
	}
}

/* The prefix length when [a, b] is exactly one prefix (a's host bits all
 * 0, b's all 1, the rest equal), else -1. */
static int prefix_of(const uint8_t *a, const uint8_t *b, unsigned n)
{
	unsigned bits = n * 8, l = 0;

	while (l < bits && ((a[l / 8] ^ b[l / 8]) & (0x80 >> (l % 8))) == 0)
		l++;
	for (unsigned i = l; i < bits; i++) {
		unsigned bit = 0x80 >> (i % 8);

		if ((a[i / 8] & bit) || !(b[i / 8] & bit))
			return -1;
	}
	return (int)l;
}

bool ng_elem_text(uint32_t keytype, const uint8_t *lens, size_t n_lens, const uint8_t *key, uint32_t klen,
		  const uint8_t *end, uint32_t elen, char *out, size_t len)
{
	unsigned types[MAX_FIELDS], n = 0, off = 0;
	char buf[512] = "";

	for (uint32_t k = keytype; k && n < MAX_FIELDS; k >>= 6)
		types[n++] = k & 63;
	if (n == 0 || (keytype >> (6 * n)) != 0 || (lens && n_lens && n_lens != n) || (end && elen != klen))
		return false;
	for (unsigned i = 0; i < n / 2; i++) { /* the first field is in the highest bits */
		unsigned t = types[i];

		types[i] = types[n - 1 - i];
		types[n - 1 - i] = t;
	}
	for (unsigned i = 0; i < n; i++) {
		/* In a concatenation each field fills whole 32-bit registers. */
		unsigned t = types[i], fl = lens && n_lens ? lens[i] : type_len(t),
			 step = n > 1 ? (fl + 3) & ~3u : fl;
		int plen;

		if (fl == 0 || off + step > klen)
			return false;
		if (i)
			strncat(buf, " . ", sizeof(buf) - strlen(buf) - 1);
		put_value(t, key + off, fl, buf, sizeof(buf));
		if (end && memcmp(key + off, end + off, fl) != 0) {
			plen = (t == NG_TYPE_IPADDR || t == NG_TYPE_IP6ADDR)
				       ? prefix_of(key + off, end + off, fl)
				       : -1;
			if (plen >= 0) {
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%d", plen);
			} else {
				strncat(buf, "-", sizeof(buf) - strlen(buf) - 1);
				put_value(t, end + off, fl, buf, sizeof(buf));
			}
		}
		off += step;
	}
	if (off != klen)
		return false;
	snprintf(out, len, "%s", buf);
	return true;
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* n lowercase hex digits into bytes; the count, or -1. */
static int unhex(const char *s, size_t n, uint8_t *out, size_t cap)
{
	if (n % 2 || n / 2 > cap)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = nibble(s[i]), lo = nibble(s[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

/* The unsigned number after `word ` in l; false if there is none. */
static bool field_u32(const char *l, const char *word, uint32_t *v)
{
	const char *p = strstr(l, word);
	unsigned long n;
	char *end;

	if (!p)
		return false;
	p += strlen(word);
	n = strtoul(p, &end, 10);
	if (end == p || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	return true;
}

/* The layout of set `name` from its line in s ("set NAME flags .. keytype T
 * keylen L concat [a,b,c] ..."): key type and concat field lengths. */
static bool set_layout(const struct ng_snapshot *s, const char *name, size_t nlen, uint32_t *keytype,
		       uint8_t *lens, size_t *n_lens)
{
	for (size_t i = 0; s && i < s->lines.n; i++) {
		const char *l = s->lines.v[i], *c;
		unsigned long v;
		char *end;

		if (strncmp(l, "set ", 4) != 0 || strncmp(l + 4, name, nlen) != 0 ||
		    strncmp(l + 4 + nlen, " flags ", 7) != 0)
			continue;
		if (!field_u32(l + 4 + nlen, " keytype ", keytype) ||
		    !(c = strstr(l + 4 + nlen, " concat [")))
			return false;
		*n_lens = 0;
		for (c += 9; *c && *c != ']';) {
			v = strtoul(c, &end, 10);
			if (end == c || v == 0 || v > MAX_KEY || *n_lens == MAX_FIELDS)
				return false;
			lens[(*n_lens)++] = (uint8_t)v;
			c = *end == ',' ? end + 1 : end;
		}
		return true;
	}
	return false;
}

bool ng_elem_line_text(const struct ng_snapshot *a, const struct ng_snapshot *b, const char *line, char *out,
		       size_t len)
{
	const char *name, *el, *hex, *sp, *flags;
	uint8_t key[MAX_KEY] = {0}, end[MAX_KEY] = {0}, lens[MAX_FIELDS] = {0};
	int klen, elen = 0;
	size_t n_lens = 0;
	uint32_t keytype;
	char text[512];

	if (strncmp(line, "set ", 4) != 0 || !(el = strstr(line, " element ")) ||
	    !(flags = strstr(el, " flags ")))
		return false;
	name = line + 4;
	hex = el + 9;
	sp = strchr(hex, ' '); /* there is one: " flags " follows */
	klen = unhex(hex, (size_t)(sp - hex), key, sizeof(key));
	if (klen <= 0)
		return false;
	if (strncmp(sp, " - ", 3) == 0) {
		hex = sp + 3;
		sp = strchr(hex, ' ');
		elen = sp ? unhex(hex, (size_t)(sp - hex), end, sizeof(end)) : -1;
		if (elen <= 0)
			return false;
	}
	if (sp != flags)
		return false;
	if (!set_layout(a, name, (size_t)(el - name), &keytype, lens, &n_lens) &&
	    !set_layout(b, name, (size_t)(el - name), &keytype, lens, &n_lens))
		return false;
	if (!ng_elem_text(keytype, lens, n_lens, key, (uint32_t)klen, elen ? end : NULL, (uint32_t)elen, text,
			  sizeof(text)))
		return false;
	snprintf(out, len, "set %.*s element %s%s", (int)(el - name), name, text, flags);
	return true;
}
