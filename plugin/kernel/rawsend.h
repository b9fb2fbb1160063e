/* Raw IP sockets opened inside a pod's network namespace: the agent writes
 * the answer to a DNS query it refused (agent/query.c) as the resolver
 * would have sent it, to the pod's own address, so the client's socket
 * gets it at once. The packet is built whole by the caller (IPv4 or IPv6
 * header included, agent/pktbuild.h); a packet to the pod's own address
 * goes through the pod's loopback, where the pod's ingress chain lets it
 * in (iif lo) and conntrack takes it as the reply it is. */
#ifndef NG_RAWSEND_H
#define NG_RAWSEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"

struct ng_rawsend {
	int fd4, fd6;
};

/* Enters `netns_fd` and opens one IPPROTO_RAW socket per family (the
 * header is the caller's: IP_HDRINCL is implied). */
int ng_rawsend_open_netns(int netns_fd, struct ng_rawsend *r, struct ng_err *err);
void ng_rawsend_close(struct ng_rawsend *r);

/* Sends pkt[0..len), whose IP header says it goes to `dst`. 0, or -1 with
 * errno. */
int ng_rawsend(const struct ng_rawsend *r, const struct ng_ip *dst, const uint8_t *pkt, size_t len);

#endif
