/* A netlink batch under construction: libnftnl's paged buffer plus, for each
 * message, what it creates. The kernel reports a failure by sequence number,
 * and this map turns "seq 17: Invalid argument" into "rule 6 of chain egress
 * (DNS, IPv4): Invalid argument". */
#ifndef NG_BATCH_H
#define NG_BATCH_H

#include <sys/uio.h> /* before libnftnl: it uses struct iovec */
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/vec.h"

struct ng_batch {
	struct nftnl_batch *nb;
	uint32_t seq_begin;  /* sequence number of the BEGIN message */
	uint32_t seq_next;   /* next sequence number to hand out */
	NG_VEC(char *) what; /* description of body message seq_begin+1+i */
	uint32_t next_set_id;
	int failed;      /* 1: out of memory; 2: a message outgrew its size */
	size_t msg_max;  /* the size the message being built was given */
	char table[256]; /* NFT_NAME_MAXLEN: a host-side table name is up to ~250 */
	/* The family of the table the next messages are about: inet for the
	 * policy, netdev for the packet-socket guard (render.c). */
	uint8_t family;
	/* Sequence numbers of the exclusive table creates: EEXIST on one of
	 * them means the table is already there (a retried ADD). */
	uint32_t excl_table_seq[4];
	unsigned n_excl_table;
};

/* "inet" or "netdev": the two families the plugin's tables live in. */
const char *ng_family_name(uint8_t family);

/* Starts a batch (writes BEGIN). seq_begin must be non-zero: a sequence
 * number of 0 disables the kernel's reply matching. */
int ng_batch_init(struct ng_batch *b, const char *table, uint32_t seq_begin, struct ng_err *err);
void ng_batch_free(struct ng_batch *b);

/* Returns the buffer for the next message and its sequence number, and
 * records what it is. Call ng_batch_commit_msg once it is built. */
struct nlmsghdr *ng_batch_msg(struct ng_batch *b, uint16_t type, uint16_t flags, const char *what_fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same, for a message that may be larger than NG_BATCH_MSG_MAX. */
struct nlmsghdr *ng_batch_msg_sized(struct ng_batch *b, size_t max_len, uint16_t type, uint16_t flags,
				    const char *what_fmt, ...) __attribute__((format(printf, 5, 6)));

/* The largest ordinary message: the largest rule (~20 expressions: the MLD
 * report header of nft/render_mld.c, a metadata form, ARP) is under 1.5 KiB. A message larger
 * than the size it was given fails the batch (an internal error the unit
 * tests would show). */
#define NG_BATCH_MSG_MAX   2048
/* A message may never be larger than this (the page overrun). */
#define NG_BATCH_MSG_LIMIT ((size_t)128 * 1024)
void ng_batch_commit_msg(struct ng_batch *b);

/* Writes END. After this the batch is ready to send. */
int ng_batch_finish(struct ng_batch *b, struct ng_err *err);

/* Body messages (between BEGIN and END), which are the ones that get acks. */
uint32_t ng_batch_count(const struct ng_batch *b);
const char *ng_batch_describe(const struct ng_batch *b, uint32_t seq);
/* Message `seq` creates a table exclusively (NLM_F_EXCL). */
bool ng_batch_is_excl_table(const struct ng_batch *b, uint32_t seq);

/* Walks every message in the batch (BEGIN and END included), in order. */
typedef int (*ng_batch_walk_fn)(const struct nlmsghdr *nlh, void *data);
int ng_batch_walk(const struct ng_batch *b, ng_batch_walk_fn fn, void *data);

#endif
