/* The agent's drift watch's ears: an nf_tables event socket (the NFNLGRP_NFTABLES
 * group `nft monitor` listens to), opened inside a pod's namespace (it then
 * hears that namespace only, like the queue socket) or in the node's, and
 * the pure reading of one event: which table of which family, what
 * happened, and which netlink socket did it.
 *
 * Who did it: every nf_tables notification carries the port id of the
 * socket whose transaction caused it (nlmsg_pid). Port ids are unique per
 * namespace while the socket lives, so the agent's own sockets in that
 * namespace (the learner's and this thread's) name themselves exactly:
 * elements the agent learns are never drift, whoever else writes is. Port
 * id 0 is the kernel itself (e.g. a timed-out element): not drift either. */
#ifndef NG_NFTEVENTS_H
#define NG_NFTEVENTS_H

#include <linux/netlink.h>
#include <stdint.h>

#include "base/err.h"

struct ng_nft_event {
	uint16_t type; /* NFT_MSG_NEWTABLE ... */
	uint8_t family;
	uint32_t portid;
	char table[256]; /* NFT_NAME_MAXLEN */
	char object[64]; /* chain, set or object name when the message has one */
};

/* Parses one message of the group; 0, or -1 when it is not an nf_tables
 * change of a table (NEWGEN, malformed, another subsystem). Pure. */
int ng_nft_event_parse(const struct nlmsghdr *nlh, struct ng_nft_event *ev);

/* "table deleted", "rule added", "set element added"...; "changed" for
 * the rest. Pure. */
const char *ng_nft_event_what(uint16_t type);

/* Receive buffers: a pod's namespace, and the node's (every pod's
 * host-side table and the agent's node-side commits). */
#define NG_NFT_EVENTS_POD_RCVBUF  (256 << 10)
#define NG_NFT_EVENTS_NODE_RCVBUF (8 << 20)

/* An event socket in the namespace `netns_fd` (-1: the current one, the
 * node's), with a large receive buffer: its fd, or -1 with err. Read it with
 * ng_nl_recv_kernel (kernel/nl.h: only the kernel's datagrams) and walk
 * each datagram with base/nlwalk.h. An overrun (ENOBUFS on read) means
 * events were lost: the caller checks everything it watches. */
int ng_nft_events_open(int netns_fd, struct ng_err *err);

#endif
