/* Whole IPv4/IPv6 packets with a UDP or TCP header and their checksums,
 * for what the agent writes into a pod's namespace itself: the answer to
 * a refused query as the resolver would send it, and the resets that end
 * a DNS-over-TCP connection whose query was refused (agent/query.c). Pure:
 * bytes in, bytes out. */
#ifndef NG_AGENT_PKTBUILD_H
#define NG_AGENT_PKTBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"

struct ng_pktspec {
	struct ng_ip src, dst; /* the same family */
	uint8_t proto;         /* 17 or 6 */
	uint16_t sport, dport;
	/* TCP */
	uint32_t seq, ack;
	uint8_t flags; /* NG_TCP_* (agent/packet.h) and 0x10 ACK, 0x08 PSH */
};

#define NG_TCP_PSH 0x08
#define NG_TCP_ACK 0x10

/* Writes the packet carrying payload[0..plen) into out (cap bytes);
 * returns its length, or 0 when it does not fit (or exceeds 65535). */
size_t ng_pkt_build(const struct ng_pktspec *s, const uint8_t *payload, size_t plen, uint8_t *out,
		    size_t cap);

#endif
