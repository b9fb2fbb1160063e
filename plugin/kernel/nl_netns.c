#include "kernel/nl_netns.h"

#include <net/if.h>

#include "kernel/netns.h"

struct open_ctx {
	struct ng_nl *nl;
	int protocol;
	unsigned group;
	const char *link;
	struct ng_err *err;
};

static int open_here(void *data)
{
	struct open_ctx *c = data;

	/* Since Linux 6.16 a netdev chain may name a device that does not
	 * exist, and then hooks nothing: the guard must be on a real one. */
	if (c->link && if_nametoindex(c->link) == 0)
		return ng_fail(c->err, NG_E_NETNS,
			       "interface %s (CNI_IFNAME) is not in the pod's network namespace: the "
			       "packet-socket guard would hook nothing",
			       c->link);
	return ng_nl_open_proto(c->nl, c->protocol, c->group, c->err);
}

int ng_nl_open_netns(int netns_fd, const char *link, struct ng_nl *nl, struct ng_err *err)
{
	struct open_ctx c = {nl, NETLINK_NETFILTER, 0, link, err};

	return ng_netns_run(netns_fd, open_here, &c, err);
}

int ng_nl_open_proto_netns(int netns_fd, int protocol, unsigned group, struct ng_nl *nl, struct ng_err *err)
{
	struct open_ctx c = {nl, protocol, group, NULL, err};

	if (netns_fd < 0)
		return open_here(&c);
	return ng_netns_run(netns_fd, open_here, &c, err);
}
