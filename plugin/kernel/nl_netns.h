/* A netlink socket opened inside a pod's network namespace: entered only
 * for the socket() call (a socket stays bound to the namespace it was made
 * in), so no other code ever runs there. */
#ifndef NG_NL_NETNS_H
#define NG_NL_NETNS_H

#include "base/err.h"
#include "kernel/nl.h"

/* Opens a netfilter socket inside the namespace `netns_fd`; with `link`,
 * that interface must exist there (code 112 otherwise). */
int ng_nl_open_netns(int netns_fd, const char *link, struct ng_nl *nl, struct ng_err *err);

/* Opens a socket of `protocol`, joined to the multicast `group` (0: none),
 * inside the namespace `netns_fd` (-1: the current one), as
 * ng_nl_open_proto does. */
int ng_nl_open_proto_netns(int netns_fd, int protocol, unsigned group, struct ng_nl *nl, struct ng_err *err);

#endif
