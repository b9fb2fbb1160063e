/* An NFLOG reader: a netfilter socket that binds log groups and reads the
 * packets the kernel logs to them (the `log group N` statement of our
 * tables). A group binding belongs to the namespace the socket was made in,
 * so a pod's group is read from a socket opened inside it (entered for the
 * socket() call only); one socket may bind several groups. The kernel
 * gives a group of a namespace to one reader at a time. */
#ifndef NG_NFLOG_H
#define NG_NFLOG_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"

#define NG_NFLOG_GROUPS 8 /* groups one reader binds at most */

struct ng_nflog {
	struct ng_nl nl;
	uint8_t *buf; /* one datagram: the records handed out point into it */
	uint16_t group[NG_NFLOG_GROUPS];
	size_t n_groups;
	/* Times the kernel could not queue log messages to us (ENOBUFS: the
	 * reader fell behind); those messages are lost. */
	unsigned long lost;
};

/* One logged packet, pointing into the reader's buffer (valid during the
 * callback only). */
struct ng_nflog_record {
	uint16_t group;
	uint8_t family;       /* NFPROTO_IPV4 / NFPROTO_IPV6 for an inet table, NFPROTO_NETDEV */
	bool have_hook;       /* NFULA_PACKET_HDR: the hook and the frame's protocol */
	uint8_t hook;         /* NF_INET_* / NF_NETDEV_INGRESS, NF_NETDEV_EGRESS */
	uint16_t hw_protocol; /* skb->protocol, host order */
	/* netdev: the frame's EtherType (from its Ethernet header on egress,
	 * where the copy starts there; skb->protocol on ingress); 0 unknown */
	uint16_t ethertype;
	const char *prefix;     /* the rule's log prefix; NULL when it gave none */
	uint32_t indev, outdev; /* ifindexes, 0: none */
	bool have_ts;           /* when the kernel logged it (Unix time) */
	int64_t ts_sec, ts_usec;
	/* From the network header (inet, netdev ingress) or the Ethernet
	 * header (netdev egress), up to the copy range. */
	const uint8_t *payload;
	size_t len;
	/* Read from the payload: */
	struct ng_ip src, dst; /* fam 0 when the payload is too short */
	uint8_t proto;         /* the first next header (IPv6 extension headers are not followed) */
	bool have_ports;       /* TCP and UDP */
	uint16_t sport, dport;
};

/* A reader in the namespace `netns_fd` (-1: the current one); -1 with err. */
int ng_nflog_open(int netns_fd, struct ng_nflog *l, struct ng_err *err);
/* A reader over a netfilter transport already open, which it takes over
 * (ng_nl_move; closed by ng_nflog_close, also when this fails); tests hand
 * it a fake kernel. -1 with err. */
int ng_nflog_attach(struct ng_nflog *l, struct ng_nl *nl, struct ng_err *err);
/* Binds `group` with copies of up to copy_range bytes of each packet (0:
 * metadata only), one message per packet: by default the kernel holds
 * them for up to a second, and what it still holds at unbind is lost.
 * -1 with err (code 110); another reader holding the group is said so. */
int ng_nflog_bind(struct ng_nflog *l, uint16_t group, uint32_t copy_range, struct ng_err *err);

/* Waits up to timeout_ms for what the kernel logged, then reads on while
 * more is waiting, until `max` records were handed to fn (0: no bound);
 * every record of a datagram read is handed over. The number of records:
 * 0 when none came in time or a signal interrupted the wait; -1 with err. */
typedef void (*ng_nflog_fn)(const struct ng_nflog_record *r, void *data);
int ng_nflog_read(struct ng_nflog *l, int timeout_ms, size_t max, ng_nflog_fn fn, void *data,
		  struct ng_err *err);

/* Unbinds its groups and closes. */
void ng_nflog_close(struct ng_nflog *l);

/* Pure: one NFULNL_MSG_PACKET message into *r; false when nlh is not one.
 * Every length is checked against the message: the payload is the pod's
 * packet, the rest the kernel's (a pod with NET_ADMIN in its namespace
 * may also log to the group with rules of its own). */
bool ng_nflog_parse(const struct nlmsghdr *nlh, struct ng_nflog_record *r);

#endif
