#include "policy/dnsquery.h"

#include <stdio.h>
#include <string.h>

#include "policy/learn.h"

#define DNS_HDR    12
#define T_OPT      41
#define C_IN       1
#define RC_FORMERR 1
#define RC_NOTIMP  4

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Skips one resource record at *off (name, fixed part, rdata); its type
 * and the name's first byte into *type / *root. -1 when it does not fit. */
static int skip_rr(const uint8_t *msg, size_t len, size_t *off, uint16_t *type, bool *root)
{
	char name[NG_DNS_NAME_LEN];
	size_t at = *off;

	if (ng_dns_name_read(msg, len, off, name) < 0 || *off + 10 > len)
		return -1;
	*root = msg[at] == 0;
	*type = rd16(msg + *off);
	*off += 10u + rd16(msg + *off + 8);
	return *off <= len ? 0 : -1;
}

enum ng_dnsq_verdict ng_dns_query_parse(const uint8_t *msg, size_t len, struct ng_dns_query *q)
{
	size_t off = DNS_HDR;
	uint16_t qd, an, ns, ar;

	memset(q, 0, sizeof(*q));
	if (!msg || len < DNS_HDR || len > 65535)
		return NG_DNSQ_MALFORMED;
	q->id = rd16(msg);
	q->opcode = (msg[2] >> 3) & 0x0f;
	q->rd = (msg[2] & 0x01) != 0;
	qd = rd16(msg + 4);
	an = rd16(msg + 6);
	ns = rd16(msg + 8);
	ar = rd16(msg + 10);
	if (msg[2] & 0x80)
		return NG_DNSQ_NOT_QUERY;
	if (qd != 1)
		return NG_DNSQ_QDCOUNT;
	q->q_off = off;
	if (ng_dns_name_read(msg, len, &off, q->name) < 0 || off + 4 > len) {
		q->name[0] = '\0';
		return NG_DNSQ_MALFORMED;
	}
	q->qtype = rd16(msg + off);
	q->qclass = rd16(msg + off + 2);
	off += 4;
	q->q_len = off - q->q_off;
	if (q->opcode != 0)
		return NG_DNSQ_OPCODE;
	if (an || ns || ar > 1)
		return NG_DNSQ_SECTIONS;
	if (ar == 1) {
		uint16_t type;
		bool root;

		if (skip_rr(msg, len, &off, &type, &root) < 0)
			return NG_DNSQ_MALFORMED;
		if (type != T_OPT || !root)
			return NG_DNSQ_SECTIONS;
	}
	if (off != len)
		return NG_DNSQ_MALFORMED; /* bytes no section accounts for */
	if (q->qclass != C_IN)
		return NG_DNSQ_CLASS;
	return NG_DNSQ_OK;
}

bool ng_dns_query_allowed(const struct ng_policy *p, const char *name)
{
	for (size_t i = 0; i < p->name_entries.n; i++)
		if (ng_name_entry_matches(&p->name_entries.v[i], name))
			return true;
	for (size_t i = 0; i < p->dns_always.n; i++)
		if (ng_name_entry_matches(&p->dns_always.v[i], name))
			return true;
	return false;
}

enum ng_dnsq_verdict ng_dns_query_judge(const struct ng_policy *p, const uint8_t *msg, size_t len,
					struct ng_dns_query *q)
{
	enum ng_dnsq_verdict v = ng_dns_query_parse(msg, len, q);

	if (v == NG_DNSQ_OK && !ng_dns_query_allowed(p, q->name))
		v = NG_DNSQ_UNLISTED;
	return v;
}

const char *ng_dnsq_verdict_name(enum ng_dnsq_verdict v)
{
	switch (v) {
	case NG_DNSQ_OK: return "allowed";
	case NG_DNSQ_MALFORMED: return "malformed";
	case NG_DNSQ_NOT_QUERY: return "not_query";
	case NG_DNSQ_OPCODE: return "opcode";
	case NG_DNSQ_QDCOUNT: return "questions";
	case NG_DNSQ_SECTIONS: return "sections";
	case NG_DNSQ_CLASS: return "class";
	case NG_DNSQ_UNLISTED: return "unlisted";
	}
	return "unknown";
}

size_t ng_dns_refusal(const uint8_t *msg, size_t len, const struct ng_dns_query *q, enum ng_dnsq_verdict v,
		      uint8_t rcode, uint8_t *out, size_t cap)
{
	bool question = q->q_len > 0 && q->q_off + q->q_len <= len;
	size_t n = DNS_HDR + (question ? q->q_len : 0);

	if (!msg || len < DNS_HDR || cap < n || v == NG_DNSQ_NOT_QUERY)
		return 0; /* nothing to answer: a response is never answered */
	if (v == NG_DNSQ_OPCODE)
		rcode = RC_NOTIMP;
	else if (v == NG_DNSQ_MALFORMED || v == NG_DNSQ_QDCOUNT || v == NG_DNSQ_SECTIONS)
		rcode = RC_FORMERR;
	memset(out, 0, DNS_HDR);
	out[0] = msg[0];
	out[1] = msg[1];
	/* QR, the query's opcode and RD; RA; the rcode. */
	out[2] = (uint8_t)(0x80 | (msg[2] & 0x79));
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));
	if (question) {
		out[5] = 1;
		memcpy(out + DNS_HDR, msg + q->q_off, q->q_len);
	}
	return n;
}

void ng_dns_name_short(const char *name, size_t max, char *out, size_t len)
{
	size_t n = strlen(name);

	if (n <= max || max < 4)
		snprintf(out, len, "%.*s", (int)(n <= max ? n : max), name);
	else
		snprintf(out, len, "%.*s...", (int)(max - 3), name);
}
