#include "kernel/netinfo.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ctx {
	struct ng_netinfo *ni;
	bool oom;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	struct ng_link l = {.ifindex = ifi->ifi_index,
			    .up = (ifi->ifi_flags & IFF_UP) != 0,
			    .loopback = (ifi->ifi_flags & IFF_LOOPBACK) != 0};

	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(attr) == IFLA_IFNAME &&
		    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(l.name, sizeof(l.name), "%s", mnl_attr_get_str(attr));
		/* Every link in the pod's namespace is "in the sandbox": its MAC
		 * gives the EUI-64 link-local address the MLD rule allows, as
		 * prevResult's interfaces[] do at ADD. */
		if (mnl_attr_get_type(attr) == IFLA_ADDRESS && mnl_attr_get_payload_len(attr) == 6 &&
		    !l.loopback) {
			struct ng_mac m;

			memcpy(m.a, mnl_attr_get_payload(attr), 6);
			if (ng_vec_push(&c->ni->prev.macs, &m) < 0)
				c->oom = true;
		}
	}
	if (ng_vec_push(&c->ni->links, &l) < 0)
		c->oom = true;
	return MNL_CB_OK;
}

static bool fill_ip(struct ng_ip *ip, uint8_t family, const struct nlattr *attr)
{
	size_t want = family == AF_INET ? 4 : 16;

	if (mnl_attr_get_payload_len(attr) != want)
		return false;
	ip->fam = family == AF_INET ? NG_V4 : NG_V6;
	memcpy(ip->a, mnl_attr_get_payload(attr), want);
	return true;
}

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	struct ng_ifaddr a = {.plen = ifa->ifa_prefixlen};
	bool have = false;

	/* Only global addresses: what a CNI plugin hands out. Link-local and
	 * host-scope (loopback) addresses are covered by the fixed rules. */
	if (ifa->ifa_scope != RT_SCOPE_UNIVERSE ||
	    (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*ifa)) {
		uint16_t t = mnl_attr_get_type(attr);

		/* IFA_LOCAL is the address on point-to-point links; else IFA_ADDRESS. */
		if ((t == IFA_LOCAL || (t == IFA_ADDRESS && !have)) && fill_ip(&a.ip, ifa->ifa_family, attr))
			have = true;
	}
	if (have && ng_vec_push(&c->ni->prev.addrs, &a) < 0)
		c->oom = true;
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ctx *c = data;
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	struct ng_ip gw;

	/* Any unicast route of the main table through a gateway: CNI plugins
	 * route either everything (a default route) or only some subnets via
	 * the same node-side gateway that prevResult names. */
	if (rt->rtm_table != RT_TABLE_MAIN || rt->rtm_type != RTN_UNICAST)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*rt)) {
		if (mnl_attr_get_type(attr) != RTA_GATEWAY || !fill_ip(&gw, rt->rtm_family, attr))
			continue;
		for (size_t i = 0; i < c->ni->prev.gateways.n; i++)
			if (ng_ip_eq(&c->ni->prev.gateways.v[i], &gw))
				return MNL_CB_OK;
		if (ng_vec_push(&c->ni->prev.gateways, &gw) < 0)
			c->oom = true;
	}
	return MNL_CB_OK;
}

static int dump(struct mnl_socket *nl, uint16_t type, size_t hdrlen, mnl_cb_t cb, struct ctx *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	uint32_t seq = (uint32_t)time(NULL), portid = mnl_socket_get_portid(nl);
	struct rtgenmsg *g;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	g->rtgen_family = AF_UNSPEC;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		ret = mnl_cb_run(buf, (size_t)ret, seq, portid, cb, c);
		if (ret <= MNL_CB_STOP)
			break;
	}
	return ret < 0 ? -1 : 0;
}

int ng_netinfo_read(struct ng_netinfo *out, struct ng_err *err)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	struct ctx c = {.ni = out};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		if (nl)
			mnl_socket_close(nl);
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the namespace");
	}
	if (dump(nl, RTM_GETLINK, sizeof(struct ifinfomsg), link_cb, &c) < 0 ||
	    dump(nl, RTM_GETADDR, sizeof(struct ifaddrmsg), addr_cb, &c) < 0 ||
	    dump(nl, RTM_GETROUTE, sizeof(struct rtmsg), route_cb, &c) < 0)
		rc = ng_fail(err, NG_E_NETNS, "reading links, addresses and routes of the namespace failed");
	else if (c.oom)
		rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
	mnl_socket_close(nl);
	return rc;
}

void ng_netinfo_free(struct ng_netinfo *n)
{
	ng_vec_free(&n->links);
	ng_prev_free(&n->prev);
}
