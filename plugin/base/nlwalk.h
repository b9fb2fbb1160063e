/* nlwalk.h: the one walk over a buffer of netlink messages that every
 * reader uses. libmnl's mnl_nlmsg_ok compares nlmsg_len as a signed int,
 * so a length over INT_MAX passes it and mnl_nlmsg_next then steps out of
 * the buffer (found by fuzz_opsread). Here every comparison is unsigned
 * against what is left, and a step never goes past the end. */
#ifndef NG_BASE_NLWALK_H
#define NG_BASE_NLWALK_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>

/* nlmsg_len rounded up to NLMSG_ALIGNTO, in size_t (NLMSG_ALIGN wraps a
 * 32-bit length near UINT32_MAX to 0). */
static inline size_t ng_nlmsg_space(const struct nlmsghdr *h)
{
	return ((size_t)h->nlmsg_len + NLMSG_ALIGNTO - 1) & ~(size_t)(NLMSG_ALIGNTO - 1);
}

/* Is there a whole message at h, within the `left` bytes of the buffer?
 * The last message of a datagram may be unaligned (NFQUEUE's packet
 * messages end with the payload, unpadded), and libmnl's attribute walk
 * reads up to its aligned end: every buffer walked must have
 * NLMSG_ALIGNTO zero bytes after the datagram (ng_nl_recv_kernel does). */
static inline bool ng_nlmsg_ok(const struct nlmsghdr *h, size_t left)
{
	return left >= sizeof(*h) && h->nlmsg_len >= sizeof(*h) && h->nlmsg_len <= left;
}

/* The message after h (ng_nlmsg_ok(h, *left) must hold); *left shrinks. */
static inline const struct nlmsghdr *ng_nlmsg_next(const struct nlmsghdr *h, size_t *left)
{
	size_t step = ng_nlmsg_space(h);

	if (step > *left)
		step = *left;
	*left -= step;
	return (const struct nlmsghdr *)((const char *)h + step);
}

#endif
