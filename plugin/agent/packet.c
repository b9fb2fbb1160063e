#include "agent/packet.h"

#include <string.h>

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static int transport(const uint8_t *p, size_t len, uint8_t proto, struct ng_pkt *out)
{
	out->proto = proto;
	if (proto == 17) {
		if (len < 8 || rd16(p + 4) < 8 || rd16(p + 4) > len)
			return -1;
		out->sport = rd16(p);
		out->dport = rd16(p + 2);
		out->payload = p + 8;
		out->payload_len = rd16(p + 4) - 8u;
		return 0;
	}
	if (proto == 6) {
		size_t off;

		if (len < 20)
			return -1;
		off = (size_t)(p[12] >> 4) * 4;
		if (off < 20 || off > len)
			return -1;
		out->sport = rd16(p);
		out->dport = rd16(p + 2);
		out->seq = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
		out->ack = (uint32_t)p[8] << 24 | (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
		out->tcp_flags = p[13];
		out->payload = p + off;
		out->payload_len = len - off;
		return 0;
	}
	return -1;
}

static int ipv4(const uint8_t *p, size_t len, struct ng_pkt *out)
{
	size_t ihl, total;

	if (len < 20)
		return -1;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	total = rd16(p + 2);
	/* A fragment (MF or an offset) is not a whole datagram: conntrack
	 * reassembles before the input hook, so this does not happen. */
	if (ihl < 20 || total < ihl || total > len || (rd16(p + 6) & 0x3fff))
		return -1;
	out->src = (struct ng_ip){.fam = NG_V4};
	out->dst = (struct ng_ip){.fam = NG_V4};
	memcpy(out->src.a, p + 12, 4);
	memcpy(out->dst.a, p + 16, 4);
	return transport(p + ihl, total - ihl, p[9], out);
}

static int ipv6(const uint8_t *p, size_t len, struct ng_pkt *out)
{
	size_t off = 40, end;
	uint8_t next;

	if (len < 40)
		return -1;
	end = 40 + (size_t)rd16(p + 4);
	if (end > len)
		return -1;
	next = p[6];
	out->src = (struct ng_ip){.fam = NG_V6};
	out->dst = (struct ng_ip){.fam = NG_V6};
	memcpy(out->src.a, p + 8, 16);
	memcpy(out->dst.a, p + 24, 16);
	/* Hop-by-hop, routing and destination options may come first; a
	 * fragment header means not reassembled: refused. At most 8. */
	for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 60); i++) {
		if (off + 8 > end)
			return -1;
		next = p[off];
		off += ((size_t)p[off + 1] + 1) * 8;
		if (off > end)
			return -1;
	}
	return transport(p + off, end - off, next, out);
}

int ng_pkt_parse(const uint8_t *p, size_t len, struct ng_pkt *out)
{
	memset(out, 0, sizeof(*out));
	if (!p || len < 1)
		return -1;
	switch (p[0] >> 4) {
	case 4: return ipv4(p, len, out);
	case 6: return ipv6(p, len, out);
	}
	return -1;
}
