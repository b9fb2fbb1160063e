/* The netlink transport: the only code of ours that opens a netlink socket
 * (scripts/lint.sh holds the rule), for every protocol we speak:
 * NETLINK_NETFILTER (nf_tables, ctnetlink, NFQUEUE, NFLOG, the nf_tables
 * event group), NETLINK_ROUTE (links, addresses, neighbours, namespace
 * ids) and NETLINK_SOCK_DIAG (verify's AF_XDP sockets). Every read through
 * it
 *   - takes only what the kernel sent (sender port id 0): in a pod's
 *     namespace a process with CAP_NET_ADMIN can send to any port id there;
 *   - walks the datagram with base/nlwalk.h's bounded walk;
 *   - reads exactly the replies of the request it sent (its sequence
 *     number) to their end (NLMSG_DONE, the ack, or an error), so the socket
 *     is ready for the next request.
 * Send and receive go through replaceable functions so unit tests can play
 * the kernel (test/unit/kernel/fake_kernel.h). nf_tables transactions are
 * kernel/nlcommit.h; sockets inside a pod's namespace kernel/nl_netns.h. */
#ifndef NG_NL_H
#define NG_NL_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/err.h"

/* The sender of a datagram whose address said nothing: never the kernel. */
#define NG_NL_NO_SENDER UINT32_MAX

struct ng_nl_ops {
	/* Like sendmsg(2): -1 with errno on failure. */
	ssize_t (*sendmsg)(void *ctx, const struct msghdr *msg);
	/* One datagram, like recvfrom(2), waited for at most timeout_ms (0:
	 * only what is there); -1/EAGAIN when nothing came. *sender: the port
	 * id it came from (0 is the kernel). */
	ssize_t (*recv)(void *ctx, void *buf, size_t len, int timeout_ms, uint32_t *sender);
};

/* What became of the last transaction sent by ng_nl_commit. */
enum ng_nl_outcome {
	NG_NL_NOT_SENT, /* the kernel saw nothing: sending the same batch again is safe */
	NG_NL_APPLIED,  /* all of it */
	NG_NL_REFUSED,  /* none of it: the kernel rolled it back */
	NG_NL_UNKNOWN,  /* processed, but a reply went missing: all or nothing, which is unknown */
};

/* How long a request waits for each of its replies. */
#define NG_NL_TIMEOUT_MS 10000
/* A receive buffer large enough for any single reply datagram, including
 * a dump batch of rules. */
#define NG_NL_RECV_BUF   ((size_t)65536)

struct ng_nl {
	const struct ng_nl_ops *ops;
	void *ctx;
	int fd;          /* -1 for an injected transport */
	int protocol;    /* NETLINK_NETFILTER, NETLINK_ROUTE: names it in messages */
	uint32_t portid; /* 0: accept replies to any port (injected) */
	uint32_t seq;    /* next sequence number for requests */
	/* The errno the kernel answered the last request (ng_nl_request,
	 * ng_nl_dump) with; 0 when it did not refuse it. */
	int answer_errno;
	/* The last commit the kernel refused: the errno and the index of the
	 * body message it refused (0 = the first after BEGIN). */
	int refused_errno;
	uint32_t refused_index;
	enum ng_nl_outcome outcome;
	/* A dump was left unfinished (NG_NL_STOP): the next dump drains it. */
	bool dump_left;
};

/* Opens a NETLINK_NETFILTER socket in the current network namespace (the
 * socket stays bound to it after a setns back). Extended acks on. */
int ng_nl_open(struct ng_nl *nl, struct ng_err *err);
/* The same for any netlink protocol, joined to the multicast `group`
 * (NFNLGRP_NFTABLES, ...; 0: none). */
int ng_nl_open_proto(struct ng_nl *nl, int protocol, unsigned group, struct ng_err *err);
/* An injected transport (tests), speaking NETLINK_NETFILTER. */
void ng_nl_init_ops(struct ng_nl *nl, const struct ng_nl_ops *ops, void *ctx);
void ng_nl_close(struct ng_nl *nl);
/* Hands the transport `from` over to `to` (`from` no longer owns the
 * socket): a struct ng_nl is never copied by assignment. */
void ng_nl_move(struct ng_nl *to, struct ng_nl *from);
/* The receive buffer, `bytes` large: SO_RCVBUFFORCE when the process may
 * (CAP_NET_ADMIN), else as far as rmem_max allows. */
void ng_nl_rcvbuf(struct ng_nl *nl, int bytes);

/* One datagram from the kernel, waited for at most timeout_ms; a datagram
 * from any other sender is read and dropped (and the wait goes on). Same
 * returns as recv(), at most len - NLMSG_ALIGNTO bytes: NLMSG_ALIGNTO zero
 * bytes follow what was read (base/nlwalk.h). */
ssize_t ng_nl_recv(struct ng_nl *nl, void *buf, size_t len, int timeout_ms);
/* The same for a bare socket (the agent's queue and event sockets, read
 * from its poll loops), without waiting: recv(MSG_DONTWAIT) that keeps
 * only the kernel's datagrams. */
ssize_t ng_nl_recv_kernel(int fd, void *buf, size_t len);

/* Sends one request (numbered from the transport; NLM_F_ACK is added, so
 * the ack ends its replies) and reads exactly its replies, each through cb
 * (NULL: none wanted), to the ack. 0, or -1 with err filled: when the
 * kernel refused it, nl->answer_errno holds its errno and err says
 * "<text>[: <extended ack>]" (the caller prefixes what it asked); when our
 * side failed (send, timeout, a malformed reply), answer_errno is 0.
 * cb returns <0 to stop with an error it has already put in err. */
typedef int (*ng_nl_dump_cb)(const struct nlmsghdr *nlh, void *data);
int ng_nl_request(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err);

/* Runs one dump request (NLM_F_DUMP set by the caller; or a GET with
 * NLM_F_ACK), calling cb for each reply message until NLMSG_DONE (or the
 * ack). Returns 0, -ENOENT when the kernel says the object does not exist
 * (err untouched), -EINTR (err filled, code 11) when the kernel marked the
 * dump interrupted by a change (NLM_F_DUMP_INTR: a commit, an address
 * added) or part of it was lost (ENOBUFS), or -1 with err filled. However
 * it ends, the rest of the dump is read and dropped, so the socket can be
 * asked again at once, except when cb returns NG_NL_STOP: then reading
 * stops there (0), the kernel keeps the rest, and the next dump on the
 * socket drains it first (closing the socket is cheaper still: a reader
 * that wanted one entry of 200,000 never copies the others). The kernel
 * refuses a new dump with EBUSY while one is unfinished on the socket: it
 * is drained and asked again, NG_NL_BUSY_TRIES times at most. */
#define NG_NL_STOP       2
#define NG_NL_BUSY_TRIES 10
int ng_nl_dump(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err);

/* A read of the ruleset (or of the links and addresses) is interrupted by
 * anyone's change (the kernel marks the dump NLM_F_DUMP_INTR, or the
 * generation moved), and on a node many ADDs commit at once. Readers read
 * again from scratch, up to NG_NL_READ_TRIES times, after
 * ng_nl_read_pause(attempt): 1-10 ms, so that a burst of commits is waited
 * out (about 0.3 s in all). */
#define NG_NL_READ_TRIES 50
void ng_nl_read_pause(int attempt);
/* read(nl, data, err) again while it returns -EINTR, as above, err
 * cleared before each new try; its last result. */
int ng_nl_read_again(struct ng_nl *nl, int (*read)(struct ng_nl *nl, void *data, struct ng_err *err),
		     void *data, struct ng_err *err);

/* One NLMSG_ERROR (or NLMSG_DONE, whose payload starts with the dump's
 * errno) as the kernel sent it. */
struct ng_nl_status {
	uint32_t seq;
	int error;        /* positive errno, 0 for an ack */
	char extack[256]; /* the kernel's message, if any */
};
/* Parses an NLMSG_ERROR or NLMSG_DONE message; false when malformed. */
bool ng_nl_parse_status(const struct nlmsghdr *nlh, struct ng_nl_status *st);

/* The ruleset generation id (NFT_MSG_GETGEN), to detect changes between
 * dumps; 0 when unavailable. */
uint32_t ng_nl_genid(struct ng_nl *nl);

/* Human text for a kernel errno in an nf_tables reply. */
const char *ng_nl_strerror(int errnum);

#endif
