/* The headers of a queued packet (IPv4 or IPv6, then UDP or TCP), read
 * without trusting a byte: the agent needs who sent it, to whom, and where
 * its DNS bytes are. Pure. */
#ifndef NG_AGENT_PACKET_H
#define NG_AGENT_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"

struct ng_pkt {
	struct ng_ip src, dst;
	uint8_t proto; /* 6 or 17 */
	uint16_t sport, dport;
	/* TCP */
	uint32_t seq, ack;
	uint8_t tcp_flags;
	/* the transport payload */
	const uint8_t *payload;
	size_t payload_len;
};

#define NG_TCP_FIN 0x01
#define NG_TCP_SYN 0x02
#define NG_TCP_RST 0x04

/* 0, or -1 when it is not a whole IPv4/IPv6 UDP or TCP packet (a fragment,
 * a truncated header, lengths that disagree). */
int ng_pkt_parse(const uint8_t *p, size_t len, struct ng_pkt *out);

#endif
