#include "kernel/sockdiag.h"

#include <errno.h>
#include <linux/sock_diag.h>
#include <linux/xdp_diag.h>
#include <string.h>
#include <sys/socket.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* ---- the request ------------------------------------------------------------ */

int ng_sockdiag_xdp(ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	struct {
		struct nlmsghdr h;
		struct xdp_diag_req r;
	} req;
	struct ng_nl nl = {.fd = -1};
	int rc;

	if (ng_nl_open_proto(&nl, NETLINK_SOCK_DIAG, 0, err) < 0)
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
