/* An NFQUEUE socket bound in a pod's network namespace: the agent receives
 * the pod's DNS answers on it and says when each may go on. A queue binding
 * belongs to the namespace the socket was created in, so the same queue
 * number is bound once per pod, each socket seeing only its own pod. */
#ifndef NG_NFQ_H
#define NG_NFQ_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct ng_nfq {
	int fd;
	uint16_t num;
	uint32_t seq;
};

/* One queued packet, pointing into the receive buffer. */
struct ng_nfq_packet {
	uint32_t id;
	uint16_t hw_protocol; /* ETH_P_IP / ETH_P_IPV6, host order */
	uint8_t hook;         /* the netfilter hook that queued it (NF_INET_LOCAL_IN, ...) */
	uint32_t indev;       /* the interface it came in on, 0: none said */
	uint32_t outdev;      /* the interface it goes out on (output hook), 0: none said */
	const uint8_t *data;  /* from the network header */
	size_t len;
};

/* Enters `netns_fd`, opens the socket, binds queue `num` with whole-packet
 * copies (up to 64 KiB), returns. EPERM from the kernel (someone else holds
 * the queue in that namespace) is code 110. */
int ng_nfq_open_netns(int netns_fd, uint16_t num, struct ng_nfq *q, struct ng_err *err);
void ng_nfq_close(struct ng_nfq *q);

/* Reads what is waiting (non-blocking) into buf and calls fn per packet.
 * Returns the number of packets, 0 when nothing was there, -1 on a socket
 * error other than EAGAIN/ENOBUFS (the kernel drops what it could not
 * queue to us: fail closed). */
typedef void (*ng_nfq_fn)(const struct ng_nfq_packet *p, void *data);
/* At most `max` datagrams are read per call: the socket stays readable and
 * the caller's loop serves the other pods' queues in between. */
int ng_nfq_read(struct ng_nfq *q, uint8_t *buf, size_t len, int max, ng_nfq_fn fn, void *data);

/* NF_ACCEPT or NF_DROP for packet `id`. */
int ng_nfq_verdict(struct ng_nfq *q, uint32_t id, uint32_t verdict);

#endif
