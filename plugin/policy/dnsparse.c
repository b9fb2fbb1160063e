#include "policy/dnsparse.h"

#include <string.h>

#define DNS_HDR 12
#define T_A_    1
#define T_AAAA_ 28
#define C_IN_   1

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Skips a (possibly compressed) name at *off; -1 when malformed. We never
 * need the name's text: the resolver asked for exactly one name. */
static int skip_name(const uint8_t *msg, size_t len, size_t *off)
{
	size_t o = *off;

	for (int labels = 0; labels < 128; labels++) {
		uint8_t l;

		if (o >= len)
			return -1;
		l = msg[o];
		if (l == 0) {
			*off = o + 1;
			return 0;
		}
		if ((l & 0xc0) == 0xc0) { /* pointer: the name ends here */
			if (o + 2 > len)
				return -1;
			*off = o + 2;
			return 0;
		}
		if (l & 0xc0)
			return -1; /* reserved label types */
		o += 1u + l;
	}
	return -1;
}

int ng_dns_parse_answers(const uint8_t *msg, size_t len, uint16_t qtype, struct ng_resolved_name *out)
{
	size_t off = DNS_HDR;
	uint16_t qd, an;
	int added = 0;

	if (!msg || len < DNS_HDR)
		return -1;
	if (!(msg[2] & 0x80))
		return -1; /* not a response */
	qd = rd16(msg + 4);
	an = rd16(msg + 6);
	for (uint16_t i = 0; i < qd; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 4 > len)
			return -1;
		off += 4;
	}
	for (uint16_t i = 0; i < an; i++) {
		uint16_t type, cls, rdlen;
		uint32_t ttl;

		if (skip_name(msg, len, &off) < 0 || off + 10 > len)
			return -1;
		type = rd16(msg + off);
		cls = rd16(msg + off + 2);
		ttl = rd32(msg + off + 4);
		rdlen = rd16(msg + off + 8);
		off += 10;
		if (off + rdlen > len)
			return -1;
		if (cls == C_IN_ && type == qtype &&
		    ((type == T_A_ && rdlen == 4) || (type == T_AAAA_ && rdlen == 16))) {
			struct ng_answer a = {0};

			a.ip.fam = type == T_A_ ? NG_V4 : NG_V6;
			memcpy(a.ip.a, msg + off, rdlen);
			/* RFC 2181 section 8: a TTL with the top bit set is zero. */
			a.ttl = ttl > 0x7fffffff ? 0 : ttl;
			if (ng_vec_push(&out->answers, &a) < 0)
				return -1;
			added++;
		}
		off += rdlen;
	}
	return added;
}
