#include "policy/dnsparse.h"

#include <stdlib.h>
#include <string.h>

#define DNS_HDR 12
#define C_IN    1

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static char label_char(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return (char)(c - 'A' + 'a');
	if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
		return (char)c;
	return '?';
}

int ng_dns_name_read(const uint8_t *msg, size_t len, size_t *off, char out[NG_DNS_NAME_LEN])
{
	size_t pos = *off, n = 0, wire = 0, next = 0;
	size_t limit = pos; /* pointers must go below this, and it only falls */
	unsigned jumps = 0;
	bool jumped = false;

	for (;;) {
		uint8_t l;

		if (pos >= len)
			return -1;
		l = msg[pos];
		if (l == 0) {
			if (!jumped)
				next = pos + 1;
			break;
		}
		if ((l & 0xc0) == 0xc0) {
			size_t ptr;

			if (pos + 1 >= len)
				return -1;
			ptr = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			/* Strictly before every earlier target: always backward,
			 * so a name's pointers cannot form a loop. */
			if (ptr < DNS_HDR || ptr >= limit || ++jumps > NG_DNS_MAX_JUMPS)
				return -1;
			if (!jumped)
				next = pos + 2;
			jumped = true;
			limit = ptr;
			pos = ptr;
			continue;
		}
		if (l & 0xc0)
			return -1; /* 0x40, 0x80: reserved / obsolete label types */
		wire += 1u + l;
		if (wire + 1 > 255 || pos + 1 + l > len)
			return -1;
		if (n)
			out[n++] = '.';
		for (size_t i = 0; i < l; i++)
			out[n++] = label_char(msg[pos + 1 + i]);
		pos += 1u + l;
	}
	out[n] = '\0';
	*off = next;
	return 0;
}

int ng_dns_parse(const uint8_t *msg, size_t len, struct ng_dns_msg *m)
{
	size_t off = DNS_HDR;
	uint16_t an;

	m->n_rrs = m->n_names = 0;
	m->truncated = m->capped = false;
	if (!msg || len < DNS_HDR || len > 65535)
		return -1;
	/* A response (QR) to a standard query (opcode 0), one question. */
	if (!(msg[2] & 0x80) || (msg[2] & 0x78) != 0 || rd16(msg + 4) != 1)
		return -1;
	m->id = rd16(msg);
	m->rcode = msg[3] & 0x0f;
	m->truncated = (msg[2] & 0x02) != 0;
	an = rd16(msg + 6);
	if (ng_dns_name_read(msg, len, &off, m->names[0]) < 0 || off + 4 > len)
		return -1;
	m->n_names = 1;
	m->qtype = rd16(msg + off);
	m->qclass = rd16(msg + off + 2);
	off += 4;
	for (uint16_t i = 0; i < an; i++) {
		struct ng_dns_rr *rr = &m->rrs[m->n_rrs];
		uint16_t type, cls, rdlen;
		size_t rdata;

		if (m->n_rrs == NG_DNS_MAX_RRS) {
			m->capped = true;
			break;
		}
		if (ng_dns_name_read(msg, len, &off, m->names[m->n_names]) < 0 || off + 10 > len)
			return -1;
		type = rd16(msg + off);
		cls = rd16(msg + off + 2);
		rdlen = rd16(msg + off + 8);
		rdata = off + 10;
		if (rdata + rdlen > len)
			return -1;
		off = rdata + rdlen;
		if (cls != C_IN || (type != NG_DNS_T_A && type != NG_DNS_T_AAAA && type != NG_DNS_T_CNAME))
			continue;
		rr->type = type;
		rr->owner = m->n_names;
		rr->ttl = rd32(msg + rdata - 6);
		if (rr->ttl > 0x7fffffff)
			rr->ttl = 0;
		if (type == NG_DNS_T_CNAME) {
			size_t t = rdata;

			if (ng_dns_name_read(msg, len, &t, m->names[m->n_names + 1]) < 0 || t != off)
				return -1;
			rr->target = (uint16_t)(m->n_names + 1);
			m->n_names += 2;
		} else {
			unsigned want = type == NG_DNS_T_A ? 4 : 16;

			if (rdlen != want)
				return -1;
			memset(&rr->ip, 0, sizeof(rr->ip));
			rr->ip.fam = type == NG_DNS_T_A ? NG_V4 : NG_V6;
			memcpy(rr->ip.a, msg + rdata, want);
			m->n_names++;
		}
		m->n_rrs++;
	}
	return 0;
}

int ng_dns_chain_find(const struct ng_dns_msg *m, const struct ng_dns_chain *c, uint16_t name)
{
	for (unsigned i = 0; i < c->n; i++)
		if (strcmp(m->names[c->name[i]], m->names[name]) == 0)
			return (int)i;
	return -1;
}

void ng_dns_chain(const struct ng_dns_msg *m, struct ng_dns_chain *c)
{
	bool grew = true;

	c->n = 1;
	c->name[0] = 0;
	c->ttl[0] = UINT32_MAX;
	/* Each round adds at least one name or stops: at most MAX_CHAIN rounds. */
	while (grew && c->n <= NG_DNS_MAX_CHAIN) {
		grew = false;
		for (uint16_t i = 0; i < m->n_rrs && c->n <= NG_DNS_MAX_CHAIN; i++) {
			const struct ng_dns_rr *rr = &m->rrs[i];
			int from;

			if (rr->type != NG_DNS_T_CNAME || (from = ng_dns_chain_find(m, c, rr->owner)) < 0 ||
			    ng_dns_chain_find(m, c, rr->target) >= 0)
				continue;
			c->name[c->n] = rr->target;
			c->ttl[c->n] = rr->ttl < c->ttl[from] ? rr->ttl : c->ttl[from];
			c->n++;
			grew = true;
		}
	}
}

void ng_dns_chain_aliases(const struct ng_dns_msg *m, const struct ng_dns_chain *c, ng_dns_aliases by)
{
	uint8_t from[NG_DNS_MAX_RRS], to[NG_DNS_MAX_RRS];
	unsigned n = 0;

	/* The CNAME links between chain names, as indexes. */
	for (uint16_t i = 0; i < m->n_rrs && n < NG_DNS_MAX_RRS; i++) {
		const struct ng_dns_rr *rr = &m->rrs[i];
		int f, t;

		if (rr->type != NG_DNS_T_CNAME || (f = ng_dns_chain_find(m, c, rr->owner)) < 0 ||
		    (t = ng_dns_chain_find(m, c, rr->target)) < 0)
			continue;
		from[n] = (uint8_t)f;
		to[n++] = (uint8_t)t;
	}
	memset(by, 0, sizeof(ng_dns_aliases));
	for (unsigned on = 0; on < c->n; on++) {
		bool grew = true;

		by[on][on] = true;
		/* Each round marks at least one more chain name or stops. */
		while (grew) {
			grew = false;
			for (unsigned k = 0; k < n; k++)
				if (by[on][to[k]] && !by[on][from[k]]) {
					by[on][from[k]] = true;
					grew = true;
				}
		}
	}
}

int ng_dns_parse_answers(const uint8_t *msg, size_t len, uint16_t qtype, struct ng_resolved_name *out)
{
	struct ng_dns_msg *m = malloc(sizeof(*m));
	struct ng_dns_chain c;
	int added = 0;

	if (!m)
		return -1;
	if (ng_dns_parse(msg, len, m) < 0) {
		free(m);
		return -1;
	}
	ng_dns_chain(m, &c);
	for (uint16_t i = 0; i < m->n_rrs; i++) {
		const struct ng_dns_rr *rr = &m->rrs[i];
		struct ng_answer a = {0};

		if (rr->type != qtype || (rr->type != NG_DNS_T_A && rr->type != NG_DNS_T_AAAA) ||
		    ng_dns_chain_find(m, &c, rr->owner) < 0)
			continue;
		a.ip = rr->ip;
		a.ttl = rr->ttl;
		if (ng_vec_push(&out->answers, &a) < 0) {
			free(m);
			return -1;
		}
		added++;
	}
	free(m);
	return added;
}
