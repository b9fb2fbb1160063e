/* rtnetlink over the transport (kernel/nl.h): the link, address,
 * namespace-id and neighbour messages we read and send, parsed in one
 * place. The peer proof (kernel/peer.c), the gateway pins
 * (kernel/neighpin.c) and verify's reading of a namespace
 * (kernel/netinfo.c) all read links and addresses the same way. */
#ifndef NG_RTNL_H
#define NG_RTNL_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "base/err.h"
#include "kernel/nl.h"

/* One link as RTM_NEWLINK describes it. */
struct ng_rtnl_link {
	int ifindex;
	unsigned flags; /* IFF_UP, IFF_LOOPBACK, ... */
	char name[16];  /* IFNAMSIZ */
	char kind[32];  /* IFLA_INFO_KIND: "veth", "bridge", ...; "" when none is said */
	uint8_t mac[6];
	bool have_mac;
	/* IFLA_LINK: the peer's (veth) or lower device's ifindex, 0 when none;
	 * IFLA_LINK_NETNSID: the namespace that index is in, as this namespace
	 * numbers it, -1 when it is this one. Indexes collide across
	 * namespaces: `link` alone names nothing. */
	int link, link_nsid;
};

/* One address as RTM_NEWADDR describes it. */
struct ng_rtnl_addr {
	int ifindex;
	uint8_t plen, scope; /* RT_SCOPE_UNIVERSE, RT_SCOPE_LINK, ... */
	/* IFA_LOCAL is the address itself on a point-to-point link, where
	 * IFA_ADDRESS is the peer's; elsewhere IFA_ADDRESS is the address. */
	struct ng_ip address, local;
	bool have_address, have_local;
};

/* Pure: false when nlh is not that kind of message (or too short). */
bool ng_rtnl_link_parse(const struct nlmsghdr *nlh, struct ng_rtnl_link *l);
bool ng_rtnl_addr_parse(const struct nlmsghdr *nlh, struct ng_rtnl_addr *a);

/* RTM_GETLINK of one link, by name (name not NULL) or by ifindex: 0 with
 * *l; 1 when there is no such link; -1 with err. */
int ng_rtnl_get_link(struct ng_nl *nl, const char *name, int ifindex, struct ng_rtnl_link *l,
		     struct ng_err *err);

/* One dump of every link (RTM_GETLINK), address (RTM_GETADDR) or route
 * (RTM_GETROUTE) of `family` (AF_UNSPEC: all), each message through cb; as
 * ng_nl_dump (-EINTR when the kernel marked it interrupted: read again with
 * ng_nl_read_again). */
int ng_rtnl_dump(struct ng_nl *nl, uint16_t type, uint8_t family, ng_nl_dump_cb cb, void *data,
		 struct ng_err *err);

/* RTM_GETNSID: the id the socket's namespace gives the namespace
 * `netns_fd`: 0 with *nsid (-1 when it has given it none); -1 with err. */
int ng_rtnl_get_nsid(struct ng_nl *nl, int netns_fd, int *nsid, struct ng_err *err);

/* RTM_NEWNEIGH, acked: `ip neigh replace IP lladdr MAC nud permanent dev
 * IFINDEX`. -1 with err (nl->answer_errno: the kernel's errno). */
int ng_rtnl_neigh_permanent(struct ng_nl *nl, int ifindex, const struct ng_ip *ip, const uint8_t mac[6],
			    struct ng_err *err);

#endif
