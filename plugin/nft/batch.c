#include "nft/batch.h"

#include <libnftnl/batch.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "base/nlwalk.h"

/* Pages of 256 KiB; a page may overrun by one maximal message (a set
 * element list nest is bounded by its 16-bit attribute length). */
#define BATCH_PAGE    ((size_t)256 * 1024)
#define BATCH_OVERRUN NG_BATCH_MSG_LIMIT

int ng_batch_init(struct ng_batch *b, const char *table, uint32_t seq_begin, struct ng_err *err)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->table, sizeof(b->table), "%s", table);
	b->nb = nftnl_batch_alloc(BATCH_PAGE, BATCH_OVERRUN);
	if (!b->nb)
		return ng_fail(err, NG_E_INTERNAL, "out of memory allocating the netlink batch");
	b->seq_begin = seq_begin;
	b->seq_next = seq_begin + 1;
	b->next_set_id = 1;
	b->family = NFPROTO_INET;
	nftnl_batch_begin(nftnl_batch_buffer(b->nb), seq_begin);
	if (nftnl_batch_update(b->nb) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory growing the netlink batch");
	return 0;
}

void ng_batch_free(struct ng_batch *b)
{
	for (size_t i = 0; i < b->what.n; i++)
		free(b->what.v[i]);
	ng_vec_free(&b->what);
	if (b->nb)
		nftnl_batch_free(b->nb);
	b->nb = NULL;
}

static struct nlmsghdr *msg_v(struct ng_batch *b, size_t max_len, uint16_t type, uint16_t flags,
			      const char *what_fmt, va_list ap)
{
	char buf[256], *copy, *at = nftnl_batch_buffer(b->nb);

	vsnprintf(buf, sizeof(buf), what_fmt, ap);
	copy = strdup(buf);
	if (!copy || ng_vec_push(&b->what, &copy) < 0) {
		free(copy);
		b->failed = 1;
	}
	/* libnftnl writes some strings without their NUL (mnl_attr_put_str)
	 * and libmnl leaves alignment padding as it finds it: on a malloc'd
	 * page a message would carry heap bytes. The kernel bounds strings by
	 * attribute length and does not care, but libnftnl's parser reads to
	 * a NUL, and CHECK parses this very batch; and heap bytes have no
	 * business reaching the kernel. So clear what the message may use: the
	 * page always has NG_BATCH_MSG_LIMIT bytes past the current position. */
	b->msg_max = max_len < NG_BATCH_MSG_LIMIT ? max_len : NG_BATCH_MSG_LIMIT;
	memset(at, 0, b->msg_max);
	if (type == NFT_MSG_NEWTABLE && (flags & NLM_F_EXCL)) {
		if (b->n_excl_table < sizeof(b->excl_table_seq) / sizeof(b->excl_table_seq[0]))
			b->excl_table_seq[b->n_excl_table++] = b->seq_next;
		else
			b->failed = 1;
	}
	/* No NLM_F_ACK: the kernel answers a body message only when it fails
	 * (kernel/nl.c ends the transaction with a marker request instead),
	 * so a batch of 100,000 messages costs no 100,000 acks. */
	return nftnl_nlmsg_build_hdr(at, type, b->family, flags, b->seq_next++);
}

const char *ng_family_name(uint8_t family)
{
	return family == NFPROTO_NETDEV ? "netdev" : "inet";
}

bool ng_batch_is_excl_table(const struct ng_batch *b, uint32_t seq)
{
	for (unsigned i = 0; i < b->n_excl_table; i++)
		if (b->excl_table_seq[i] == seq)
			return true;
	return false;
}

struct nlmsghdr *ng_batch_msg(struct ng_batch *b, uint16_t type, uint16_t flags, const char *what_fmt, ...)
{
	struct nlmsghdr *nlh;
	va_list ap;

	va_start(ap, what_fmt);
	nlh = msg_v(b, NG_BATCH_MSG_MAX, type, flags, what_fmt, ap);
	va_end(ap);
	return nlh;
}

struct nlmsghdr *ng_batch_msg_sized(struct ng_batch *b, size_t max_len, uint16_t type, uint16_t flags,
				    const char *what_fmt, ...)
{
	struct nlmsghdr *nlh;
	va_list ap;

	va_start(ap, what_fmt);
	nlh = msg_v(b, max_len, type, flags, what_fmt, ap);
	va_end(ap);
	return nlh;
}

void ng_batch_commit_msg(struct ng_batch *b)
{
	const struct nlmsghdr *nlh = nftnl_batch_buffer(b->nb);

	if (nlh->nlmsg_len > b->msg_max)
		b->failed = 2;
	if (nftnl_batch_update(b->nb) < 0)
		b->failed = 1;
}

int ng_batch_finish(struct ng_batch *b, struct ng_err *err)
{
	if (b->failed == 2)
		return ng_fail(err, NG_E_INTERNAL, "internal error: a netlink message outgrew its bound");
	if (b->failed)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while building the netlink batch");
	nftnl_batch_end(nftnl_batch_buffer(b->nb), b->seq_next);
	if (nftnl_batch_update(b->nb) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory growing the netlink batch");
	return 0;
}

uint32_t ng_batch_count(const struct ng_batch *b)
{
	return (uint32_t)b->what.n;
}

const char *ng_batch_describe(const struct ng_batch *b, uint32_t seq)
{
	if (seq == b->seq_begin)
		return "batch begin";
	if (seq > b->seq_begin && seq - b->seq_begin - 1 < b->what.n)
		return b->what.v[seq - b->seq_begin - 1];
	if (seq == b->seq_begin + 1 + b->what.n)
		return "batch end";
	return "unknown message";
}

int ng_batch_walk(const struct ng_batch *b, ng_batch_walk_fn fn, void *data)
{
	int n = nftnl_batch_iovec_len(b->nb);
	struct iovec iov[n > 0 ? n : 1];

	nftnl_batch_iovec(b->nb, iov, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		const struct nlmsghdr *nlh = iov[i].iov_base;
		size_t len = iov[i].iov_len;

		while (ng_nlmsg_ok(nlh, len)) {
			int rc = fn(nlh, data);

			if (rc < 0)
				return rc;
			nlh = ng_nlmsg_next(nlh, &len);
		}
	}
	return 0;
}
