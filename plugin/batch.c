#include "batch.h"

#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

/* Pages of 256 KiB; a page may overrun by one maximal message (a set
 * element list nest is bounded by its 16-bit attribute length). */
#define BATCH_PAGE    (256 * 1024)
#define BATCH_OVERRUN (128 * 1024)

/* Zeroes the unused part of the newest page. libnftnl writes some strings
 * without their NUL (mnl_attr_put_str) and libmnl leaves the alignment
 * padding as it finds it, so on a fresh malloc'd page a message would carry
 * heap bytes; the kernel bounds strings by attribute length and does not
 * care, but libnftnl's parser reads up to a NUL, and CHECK parses this very
 * batch. Called once per page, when the page is new. */
static void zero_new_page(struct ng_batch *b)
{
	int n = nftnl_batch_iovec_len(b->nb);
	struct iovec iov[n > 0 ? n : 1];

	if (n <= 0 || n == b->pages)
		return;
	nftnl_batch_iovec(b->nb, iov, (uint32_t)n);
	memset((char *)iov[n - 1].iov_base + iov[n - 1].iov_len, 0,
	       BATCH_PAGE + BATCH_OVERRUN - iov[n - 1].iov_len);
	b->pages = n;
}

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
	nftnl_batch_begin(nftnl_batch_buffer(b->nb), seq_begin);
	if (nftnl_batch_update(b->nb) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory growing the netlink batch");
	zero_new_page(b);
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

struct nlmsghdr *ng_batch_msg(struct ng_batch *b, uint16_t type, uint16_t flags, const char *what_fmt, ...)
{
	char buf[256], *copy;
	va_list ap;

	va_start(ap, what_fmt);
	vsnprintf(buf, sizeof(buf), what_fmt, ap);
	va_end(ap);
	copy = strdup(buf);
	if (!copy || ng_vec_push(&b->what, &copy) < 0) {
		free(copy);
		b->failed = 1;
	}
	/* Every body message asks for an ack, so the receiver can read exactly
	 * one reply per message and know each one's fate. */
	return nftnl_nlmsg_build_hdr(nftnl_batch_buffer(b->nb), type, NFPROTO_INET, flags | NLM_F_ACK,
				     b->seq_next++);
}

void ng_batch_commit_msg(struct ng_batch *b)
{
	if (nftnl_batch_update(b->nb) < 0)
		b->failed = 1;
	else
		zero_new_page(b);
}

int ng_batch_finish(struct ng_batch *b, struct ng_err *err)
{
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
		int len = (int)iov[i].iov_len;

		while (mnl_nlmsg_ok(nlh, len)) {
			int rc = fn(nlh, data);

			if (rc < 0)
				return rc;
			nlh = mnl_nlmsg_next(nlh, &len);
		}
	}
	return 0;
}
