#include "agent/pktbuild.h"

#include <string.h>

#define IP4_HDR 20
#define IP6_HDR 40
#define UDP_HDR 8
#define TCP_HDR 20

static void wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, v >> 16);
	wr16(p + 2, v);
}

/* The ones' complement sum of p[0..len), added to `sum`. */
static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t ng_pkt_build(const struct ng_pktspec *s, const uint8_t *payload, size_t plen, uint8_t *out, size_t cap)
{
	size_t ip = s->src.fam == NG_V4 ? IP4_HDR : IP6_HDR, alen = s->src.fam == NG_V4 ? 4 : 16;
	size_t th = s->proto == 17 ? UDP_HDR : TCP_HDR, l4 = th + plen, total = ip + l4;
	uint8_t *t = out + ip;
	uint32_t sum;
	uint16_t ck;

	if (total > 65535 || total > cap || s->src.fam != s->dst.fam || (s->proto != 17 && s->proto != 6))
		return 0;
	memset(out, 0, ip + th);
	if (s->src.fam == NG_V4) {
		out[0] = 0x45;
		wr16(out + 2, (uint32_t)total);
		wr16(out + 6, 0x4000); /* don't fragment */
		out[8] = 64;
		out[9] = s->proto;
		memcpy(out + 12, s->src.a, 4);
		memcpy(out + 16, s->dst.a, 4);
		wr16(out + 10, fold(sum16(out, IP4_HDR, 0)));
	} else {
		out[0] = 0x60;
		wr16(out + 4, (uint32_t)l4);
		out[6] = s->proto;
		out[7] = 64;
		memcpy(out + 8, s->src.a, 16);
		memcpy(out + 24, s->dst.a, 16);
	}
	wr16(t, s->sport);
	wr16(t + 2, s->dport);
	if (s->proto == 17) {
		wr16(t + 4, (uint32_t)l4);
	} else {
		wr32(t + 4, s->seq);
		wr32(t + 8, s->ack);
		t[12] = (TCP_HDR / 4) << 4;
		t[13] = s->flags;
		wr16(t + 14, 65535);
	}
	if (plen)
		memcpy(t + th, payload, plen);
	/* The pseudo-header: addresses, protocol, transport length. */
	sum = sum16(s->src.a, alen, 0);
	sum = sum16(s->dst.a, alen, sum);
	sum += s->proto;
	sum += (uint32_t)l4 & 0xffff;
	sum += (uint32_t)l4 >> 16;
	ck = fold(sum16(t, l4, sum));
	if (s->proto == 17 && ck == 0)
		ck = 0xffff; /* UDP: 0 means "no checksum" */
	wr16(t + (s->proto == 17 ? 6 : 16), ck);
	return total;
}
