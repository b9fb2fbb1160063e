#include "kernel/sockdiag.h"

#include <errno.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define DIAG_TIMEOUT_MS 10000

/* ---- a NETLINK_SOCK_DIAG transport -----------------------------------------
 * kernel/nl.c opens NETLINK_NETFILTER only. This is the smallest opener of
 * another protocol on the same struct ng_nl, so that ng_nl_dump (its
 * sequence check, its bounded walk, replies from the kernel only) reads the
 * dump; it belongs in the shared transport (kernel/nl.c) once that opens
 * every protocol. */

static ssize_t diag_sendmsg(void *ctx, const struct msghdr *msg)
{
	const struct ng_nl *nl = ctx;

	return sendmsg(nl->fd, msg, 0);
}

static ssize_t diag_recv(void *ctx, void *buf, size_t len)
{
	const struct ng_nl *nl = ctx;
	struct pollfd p = {.fd = nl->fd, .events = POLLIN};
	int rc;

	do {
		rc = poll(&p, 1, DIAG_TIMEOUT_MS);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		errno = EAGAIN;
	if (rc <= 0)
		return -1;
	/* Only the kernel's datagrams: a process of the pod may send to our
	 * port id. */
	return ng_nl_recv_kernel(nl->fd, buf, len);
}

static const struct ng_nl_ops diag_ops = {diag_sendmsg, diag_recv};

static int diag_open(struct ng_nl *nl, struct ng_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (fd < 0)
		return ng_fail(err, NG_E_KERNEL, "cannot open a sock_diag netlink socket: %s",
			       strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return ng_fail(err, NG_E_KERNEL, "cannot bind the sock_diag netlink socket: %s", strerror(e));
	}
	ng_nl_init_ops(nl, &diag_ops, nl);
	nl->fd = fd;
	return 0;
}

/* ---- the request ------------------------------------------------------------ */

int ng_sockdiag_xdp(ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	struct {
		struct nlmsghdr h;
		struct xdp_diag_req r;
	} req;
	struct ng_nl nl;
	int rc;

	if (diag_open(&nl, err) < 0)
		return -1;
	memset(&req, 0, sizeof(req)); /* no stack bytes to the kernel */
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = AF_XDP;
	req.r.xdiag_show = XDP_SHOW_INFO;
	rc = ng_nl_dump(&nl, &req.h, cb, data, err);
	if (rc < 0 && rc != -ENOENT)
		ng_err_prefix(err, "listing AF_XDP sockets (sock_diag): ");
	ng_nl_close(&nl);
	return rc == -ENOENT ? -ENOENT : rc < 0 ? -1 : 0;
}
