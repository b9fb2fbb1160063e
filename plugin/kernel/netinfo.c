#include "kernel/netinfo.h"

#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "kernel/rtnl.h"

struct ctx {
	struct ng_netinfo *ni;
	bool oom;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	struct ng_rtnl_link rl;
	struct ng_link l = {0};

	if (!ng_rtnl_link_parse(nlh, &rl))
		return 0;
	l.ifindex = rl.ifindex;
	l.up = (rl.flags & IFF_UP) != 0;
	l.loopback = (rl.flags & IFF_LOOPBACK) != 0;
	snprintf(l.name, sizeof(l.name), "%s", rl.name);
	/* Every link in the pod's namespace is "in the sandbox": its MAC gives
	 * the EUI-64 link-local address the MLD rule allows, as prevResult's
	 * interfaces[] do at ADD. */
	if (rl.have_mac && !l.loopback) {
		struct ng_mac m;

		memcpy(m.a, rl.mac, 6);
		if (ng_vec_push(&c->ni->prev.macs, &m) < 0)
			c->oom = true;
	}
	if (ng_vec_push(&c->ni->links, &l) < 0)
		c->oom = true;
	return 0;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	struct ng_rtnl_addr ra;
	struct ng_ifaddr a = {0};

	/* Only global addresses: what a CNI plugin hands out. Link-local and
	 * host-scope (loopback) addresses are covered by the fixed rules. */
	if (!ng_rtnl_addr_parse(nlh, &ra) || ra.scope != RT_SCOPE_UNIVERSE ||
	    (!ra.have_local && !ra.have_address))
		return 0;
	a.plen = ra.plen;
	/* IFA_LOCAL is the address on point-to-point links; else IFA_ADDRESS. */
	a.ip = ra.have_local ? ra.local : ra.address;
	if (ng_vec_push(&c->ni->prev.addrs, &a) < 0)
		c->oom = true;
	return 0;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	struct ng_ip gw = {0};
	size_t want;

	if (nlh->nlmsg_type != RTM_NEWROUTE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)))
		return 0;
	/* Any unicast route of the main table through a gateway: CNI plugins
	 * route either everything (a default route) or only some subnets via
	 * the same node-side gateway that prevResult names. */
	if (rt->rtm_table != RT_TABLE_MAIN || rt->rtm_type != RTN_UNICAST ||
	    (rt->rtm_family != AF_INET && rt->rtm_family != AF_INET6))
		return 0;
	want = rt->rtm_family == AF_INET ? 4 : 16;
	mnl_attr_for_each(attr, nlh, sizeof(*rt)) {
		if (mnl_attr_get_type(attr) != RTA_GATEWAY || mnl_attr_get_payload_len(attr) != want)
			continue;
		gw.fam = rt->rtm_family == AF_INET ? NG_V4 : NG_V6;
		memcpy(gw.a, mnl_attr_get_payload(attr), want);
		for (size_t i = 0; i < c->ni->prev.gateways.n; i++)
			if (ng_ip_eq(&c->ni->prev.gateways.v[i], &gw))
				return 0;
		if (ng_vec_push(&c->ni->prev.gateways, &gw) < 0)
			c->oom = true;
	}
	return 0;
}

/* The three dumps, from scratch each time the kernel says one was
 * interrupted (links or addresses changed meanwhile). */
static int read_all(struct ng_nl *nl, void *data, struct ng_err *err)
{
	struct ctx *c = data;
	int rc;

	c->ni->links.n = c->ni->prev.macs.n = c->ni->prev.addrs.n = c->ni->prev.gateways.n = 0;
	rc = ng_rtnl_dump(nl, RTM_GETLINK, AF_UNSPEC, link_cb, c, err);
	if (rc == 0)
		rc = ng_rtnl_dump(nl, RTM_GETADDR, AF_UNSPEC, addr_cb, c, err);
	if (rc == 0)
		rc = ng_rtnl_dump(nl, RTM_GETROUTE, AF_UNSPEC, route_cb, c, err);
	return rc;
}

int ng_netinfo_read(struct ng_netinfo *out, struct ng_err *err)
{
	struct ctx c = {.ni = out};
	struct ng_err e = {0};
	struct ng_nl nl = {.fd = -1};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (ng_nl_open_proto(&nl, NETLINK_ROUTE, 0, &e) < 0)
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the namespace");
	if (ng_nl_read_again(&nl, read_all, &c, &e) < 0)
		rc = ng_fail(err, NG_E_NETNS,
			     "reading links, addresses and routes of the namespace failed: %s", e.msg);
	else if (c.oom)
		rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
	ng_nl_close(&nl);
	return rc;
}

void ng_netinfo_free(struct ng_netinfo *n)
{
	ng_vec_free(&n->links);
	ng_prev_free(&n->prev);
}
