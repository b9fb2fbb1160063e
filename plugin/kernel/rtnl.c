#include "kernel/rtnl.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* ---- parsing -------------------------------------------------------------- */

static int linkinfo_cb(const struct nlattr *a, void *data)
{
	struct ng_rtnl_link *l = data;

	if (mnl_attr_get_type(a) == IFLA_INFO_KIND && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		snprintf(l->kind, sizeof(l->kind), "%s", mnl_attr_get_str(a));
	return MNL_CB_OK;
}

bool ng_rtnl_link_parse(const struct nlmsghdr *nlh, struct ng_rtnl_link *l)
{
	const struct ifinfomsg *ifi;
	const struct nlattr *a;

	memset(l, 0, sizeof(*l));
	l->link_nsid = -1;
	if (nlh->nlmsg_type != RTM_NEWLINK || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return false;
	ifi = mnl_nlmsg_get_payload(nlh);
	l->ifindex = ifi->ifi_index;
	l->flags = ifi->ifi_flags;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				snprintf(l->name, sizeof(l->name), "%s", mnl_attr_get_str(a));
			break;
		case IFLA_ADDRESS:
			if (mnl_attr_get_payload_len(a) == 6) {
				memcpy(l->mac, mnl_attr_get_payload(a), 6);
				l->have_mac = true;
			}
			break;
		case IFLA_LINK:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				l->link = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINK_NETNSID: /* an s32 */
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				l->link_nsid = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO: mnl_attr_parse_nested(a, linkinfo_cb, l); break;
		}
	}
	return true;
}

static bool fill_ip(struct ng_ip *ip, uint8_t family, const struct nlattr *a)
{
	size_t want = family == AF_INET ? 4 : 16;

	if ((family != AF_INET && family != AF_INET6) || mnl_attr_get_payload_len(a) != want)
		return false;
	ip->fam = family == AF_INET ? NG_V4 : NG_V6;
	memcpy(ip->a, mnl_attr_get_payload(a), want);
	return true;
}

bool ng_rtnl_addr_parse(const struct nlmsghdr *nlh, struct ng_rtnl_addr *out)
{
	const struct ifaddrmsg *ifa;
	const struct nlattr *a;

	memset(out, 0, sizeof(*out));
	if (nlh->nlmsg_type != RTM_NEWADDR || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return false;
	ifa = mnl_nlmsg_get_payload(nlh);
	out->ifindex = (int)ifa->ifa_index;
	out->plen = ifa->ifa_prefixlen;
	out->scope = ifa->ifa_scope;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_type(a) == IFA_ADDRESS && fill_ip(&out->address, ifa->ifa_family, a))
			out->have_address = true;
		else if (mnl_attr_get_type(a) == IFA_LOCAL && fill_ip(&out->local, ifa->ifa_family, a))
			out->have_local = true;
	}
	return true;
}

/* ---- requests ------------------------------------------------------------- */

struct link_req {
	struct ng_rtnl_link *l;
	bool found;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_req *r = data;

	if (ng_rtnl_link_parse(nlh, r->l))
		r->found = true;
	return 0;
}

int ng_rtnl_get_link(struct ng_nl *nl, const char *name, int ifindex, struct ng_rtnl_link *l,
		     struct ng_err *err)
{
	char buf[512] __attribute__((aligned(4)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct ifinfomsg *ifi;
	struct link_req r = {l, false};

	memset(l, 0, sizeof(*l));
	l->link_nsid = -1;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = name ? 0 : ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (ng_nl_request(nl, nlh, link_cb, &r, err) < 0) {
		if (nl->answer_errno != ENODEV)
			return -1;
		if (err) /* no such link: an answer, not a failure */
			memset(err, 0, sizeof(*err));
		return 1;
	}
	return r.found ? 0 : 1;
}

int ng_rtnl_dump(struct ng_nl *nl, uint16_t type, uint8_t family, ng_nl_dump_cb cb, void *data,
		 struct ng_err *err)
{
	char buf[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	size_t hdrlen = type == RTM_GETADDR    ? sizeof(struct ifaddrmsg)
			: type == RTM_GETROUTE ? sizeof(struct rtmsg)
					       : sizeof(struct ifinfomsg);
	uint8_t *fam;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	/* Each of the three headers starts with its family. */
	fam = mnl_nlmsg_put_extra_header(nlh, hdrlen);
	*fam = family;
	return ng_nl_dump(nl, nlh, cb, data, err);
}

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWNSID)
		return 0;
	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg)) {
		if (mnl_attr_get_type(a) == NETNSA_NSID && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			*(int *)data = (int)mnl_attr_get_u32(a); /* an s32: -1 when none */
	}
	return 0;
}

int ng_rtnl_get_nsid(struct ng_nl *nl, int netns_fd, int *nsid, struct ng_err *err)
{
	char buf[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct rtgenmsg *g;
	int id = -1;

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (uint32_t)netns_fd);
	if (ng_nl_request(nl, nlh, nsid_cb, &id, err) < 0)
		return -1;
	*nsid = id < 0 ? -1 : id;
	return 0;
}

int ng_rtnl_neigh_permanent(struct ng_nl *nl, int ifindex, const struct ng_ip *ip, const uint8_t mac[6],
			    struct ng_err *err)
{
	char buf[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct ndmsg *nd;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = ip->fam == NG_V4 ? AF_INET : AF_INET6;
	nd->ndm_ifindex = ifindex;
	nd->ndm_state = NUD_PERMANENT;
	mnl_attr_put(nlh, NDA_DST, ng_ip_len(ip->fam), ip->a);
	mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return ng_nl_request(nl, nlh, NULL, NULL, err);
}
