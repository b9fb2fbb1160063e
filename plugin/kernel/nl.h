/* The netlink transport: the only code that talks to the kernel. It sends a
 * batch in ONE sendmsg (one skb, so the kernel sees one transaction), reads
 * exactly one reply per message, and names the failing object from the
 * batch's map. Send and receive go through replaceable functions so unit
 * tests can play the kernel: errors on the k-th message, ENOBUFS, EINTR,
 * truncated replies. */
#ifndef NG_NL_H
#define NG_NL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "nft/batch.h"
#include "base/err.h"

struct ng_nl_ops {
	/* Like sendmsg(2)/recv(2): -1 with errno on failure. recv may block
	 * for at most the transport's timeout; -1/EAGAIN when nothing came. */
	ssize_t (*sendmsg)(void *ctx, const struct msghdr *msg);
	ssize_t (*recv)(void *ctx, void *buf, size_t len);
};

/* What became of the last transaction sent by ng_nl_commit. */
enum ng_nl_outcome {
	NG_NL_NOT_SENT, /* the kernel saw nothing: sending the same batch again is safe */
	NG_NL_APPLIED,  /* all of it */
	NG_NL_REFUSED,  /* none of it: the kernel rolled it back */
	NG_NL_UNKNOWN,  /* processed, but a reply went missing: all or nothing, which is unknown */
};

/* The largest transaction sent, in bytes (README "Limits"): the policy
 * layer's own limits keep a valid configuration far below it, so this is
 * a last bound, checked before anything is sent. */
#define NG_NL_BATCH_MAX ((size_t)256 << 20)

struct ng_nl {
	const struct ng_nl_ops *ops;
	void *ctx;
	int fd;          /* -1 for an injected transport */
	uint32_t portid; /* 0: accept replies to any port (injected) */
	uint32_t seq;    /* next sequence number for requests */
	/* The last commit the kernel refused: the errno and the index of the
	 * body message it refused (0 = the first after BEGIN). */
	int refused_errno;
	uint32_t refused_index;
	enum ng_nl_outcome outcome;
};

/* Opens a NETLINK_NETFILTER socket in the current network namespace (the
 * socket stays bound to it after a setns back). Extended acks on. */
int ng_nl_open(struct ng_nl *nl, struct ng_err *err);
/* recv(MSG_DONTWAIT) for a netlink socket only the kernel may talk to: a
 * datagram from any other sender is read and dropped. In a pod's namespace
 * a process with CAP_NET_ADMIN can send to any port id there, and the
 * agent's queue and event sockets live there: a forged queue "packet"
 * would otherwise teach the agent addresses (into the node-side table,
 * which NET_ADMIN in the pod cannot touch). Same returns as recv(), at
 * most len - NLMSG_ALIGNTO bytes: NLMSG_ALIGNTO zero bytes follow what was
 * read (base/nlwalk.h). */
ssize_t ng_nl_recv_kernel(int fd, void *buf, size_t len);
/* An injected transport (tests). */
void ng_nl_init_ops(struct ng_nl *nl, const struct ng_nl_ops *ops, void *ctx);
void ng_nl_close(struct ng_nl *nl);

/* Starts a batch for `table` numbered from the transport's next sequence
 * number; ng_nl_commit moves that number past it (the one place that
 * knows a transaction's numbering: BEGIN, the body, END, the marker). */
int ng_nl_batch_init(struct ng_nl *nl, struct ng_batch *b, const char *table, struct ng_err *err);

/* Sends the batch in one sendmsg, then a marker request; the kernel
 * answers only the messages that fail, then the marker. On the first
 * failure: code 110 naming the object (the kernel has rolled the whole
 * transaction back). A send that failed (nothing reached the kernel): code
 * 11, nl->outcome NG_NL_NOT_SENT. A lost marker (a timeout): code 11,
 * NG_NL_UNKNOWN. Above NG_NL_BATCH_MAX bytes: code 7, nothing sent. */
int ng_nl_commit(struct ng_nl *nl, const struct ng_batch *b, struct ng_err *err);

/* Runs one dump request (NLM_F_DUMP set by the caller), calling cb for each
 * reply message until NLMSG_DONE. Returns 0, -ENOENT when the kernel says
 * the object does not exist, -EINTR (err filled, code 11) when the kernel
 * marked the dump interrupted by a commit, or -1 with err filled. cb returns <0 to stop
 * with an error it has already put in err. */
typedef int (*ng_nl_dump_cb)(const struct nlmsghdr *nlh, void *data);
int ng_nl_dump(struct ng_nl *nl, struct nlmsghdr *req, ng_nl_dump_cb cb, void *data, struct ng_err *err);

/* A read of the ruleset is interrupted by anyone's commit (the kernel
 * marks the dump NLM_F_DUMP_INTR, or the generation moved), and on a node
 * many ADDs commit at once. Readers read again from scratch, up to
 * NG_NL_READ_TRIES times, after ng_nl_read_pause(attempt): 1-10 ms, so
 * that a burst of commits is waited out (about 0.3 s in all). */
#define NG_NL_READ_TRIES 50
void ng_nl_read_pause(int attempt);

/* The ruleset generation id (NFT_MSG_GETGEN), to detect changes between
 * dumps; 0 when unavailable. */
uint32_t ng_nl_genid(struct ng_nl *nl);

/* Human text for a kernel errno in an nf_tables reply. */
const char *ng_nl_strerror(int errnum);

#endif
