/* sock_diag (NETLINK_SOCK_DIAG) requests: the AF_XDP sockets of the current
 * network namespace, which no /proc file lists. verify runs it inside the
 * pod's namespace (node/sockholders.c); the replies are parsed by
 * node/nssock.c. */
#ifndef NG_SOCKDIAG_H
#define NG_SOCKDIAG_H

#include "base/err.h"
#include "kernel/nl.h"

/* Dumps the namespace's AF_XDP sockets (SOCK_DIAG_BY_FAMILY, struct
 * xdp_diag_req, XDP_SHOW_INFO), cb once per reply message. 0; -ENOENT when
 * this kernel cannot list them (built without CONFIG_XDP_SOCKETS_DIAG, or
 * the module is missing), err untouched; -1 with err. */
int ng_sockdiag_xdp(ng_nl_dump_cb cb, void *data, struct ng_err *err);

#endif
