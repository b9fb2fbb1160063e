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

/* Is there a whole message at h, within the `left` bytes of the buffer? */
static inline bool ng_nlmsg_ok(const struct nlmsghdr *h, size_t left)
{
	return left >= sizeof(*h) && h->nlmsg_len >= sizeof(*h) && h->nlmsg_len <= left;
}

/* The message after h (ng_nlmsg_ok(h, *left) must hold); *left shrinks. */
static inline const struct nlmsghdr *ng_nlmsg_next(const struct nlmsghdr *h, size_t *left)
{
	size_t step = NLMSG_ALIGN(h->nlmsg_len);

	if (step > *left)
		step = *left;
	*left -= step;
	return (const struct nlmsghdr *)((const char *)h + step);
}

#endif
