/* Live probes for `verify`, run from inside the pod's network namespace: a
 * TCP connect and a DNS query, each timed, each reporting how it ended. */
#ifndef NG_PROBE_H
#define NG_PROBE_H

#include <stdint.h>

#include "base/addr.h"

enum ng_probe_result {
	NG_PROBE_CONNECTED,   /* TCP handshake completed / DNS answered */
	NG_PROBE_REFUSED,     /* RST, or ICMP port/admin unreachable: failed at once */
	NG_PROBE_UNREACHABLE, /* no route, or ICMP host/net unreachable */
	NG_PROBE_TIMEOUT,     /* nothing came back in time: ambiguous */
	NG_PROBE_ERROR,       /* anything else (errno in .err) */
};

struct ng_probe {
	enum ng_probe_result result;
	double ms;
	int err;          /* errno of the failure, 0 on success */
	unsigned answers; /* DNS: records in the answer section */
	unsigned rcode;   /* DNS: response code */
	uint16_t lport;   /* DNS: the probe's own port */
	bool question_ok; /* DNS: the answer echoes the question */
};

const char *ng_probe_result_name(enum ng_probe_result r);

/* Connects to ip:port over TCP within timeout_ms. `ifindex` scopes an IPv6
 * link-local address (fe80::/10) to an interface; 0 otherwise. */
void ng_probe_tcp(const struct ng_ip *ip, uint16_t port, unsigned ifindex, int timeout_ms,
		  struct ng_probe *out);

/* Sends one DNS query (NS of `name`, "." for the root) to server:53 over UDP
 * or TCP; any well-formed response with our id counts as answered, whatever
 * its rcode: the point is that the resolver is reachable. */
void ng_probe_dns(const struct ng_ip *server, int tcp, const char *name, int timeout_ms,
		  struct ng_probe *out);

#endif
