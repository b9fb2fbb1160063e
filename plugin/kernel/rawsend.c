#include "kernel/rawsend.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/netns.h"

struct open_ctx {
	struct ng_rawsend *r;
	struct ng_err *err;
};

static int open_here(void *data)
{
	struct open_ctx *c = data;

	c->r->fd4 = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
	c->r->fd6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_RAW);
	if (c->r->fd4 < 0 || c->r->fd6 < 0)
		return ng_fail(c->err, NG_E_KERNEL, "raw socket in the pod's namespace: %s", strerror(errno));
	return 0;
}

int ng_rawsend_open_netns(int netns_fd, struct ng_rawsend *r, struct ng_err *err)
{
	struct open_ctx c = {r, err};

	r->fd4 = r->fd6 = -1;
	if (ng_netns_run(netns_fd, open_here, &c, err) < 0) {
		ng_rawsend_close(r);
		return -1;
	}
	return 0;
}

void ng_rawsend_close(struct ng_rawsend *r)
{
	if (r->fd4 >= 0)
		close(r->fd4);
	if (r->fd6 >= 0)
		close(r->fd6);
	r->fd4 = r->fd6 = -1;
}

int ng_rawsend(const struct ng_rawsend *r, const struct ng_ip *dst, const uint8_t *pkt, size_t len)
{
	ssize_t n;

	if (dst->fam == NG_V4) {
		struct sockaddr_in sa = {.sin_family = AF_INET};

		memcpy(&sa.sin_addr, dst->a, 4);
		n = sendto(r->fd4, pkt, len, 0, (const struct sockaddr *)&sa, sizeof(sa));
	} else {
		struct sockaddr_in6 sa = {.sin6_family = AF_INET6};

		memcpy(&sa.sin6_addr, dst->a, 16);
		n = sendto(r->fd6, pkt, len, 0, (const struct sockaddr *)&sa, sizeof(sa));
	}
	return n == (ssize_t)len ? 0 : -1;
}
