#include "kernel/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel/netns.h"

/* One link as rtnetlink describes it. */
struct link {
	int ifindex, link, link_nsid; /* link_nsid -1: the peer is in this namespace */
	char name[IFNAMSIZ], kind[32];
	uint8_t mac[6];
	bool have_mac, found;
};

struct req {
	struct mnl_socket *nl;
	uint32_t seq;
};

static int run(struct req *r, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t portid = mnl_socket_get_portid(r->nl);
	ssize_t n;
	int rc;

	nlh->nlmsg_seq = ++r->seq;
	if (mnl_socket_sendto(r->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(r->nl, buf, sizeof(buf));
		if (n < 0)
			return -1;
		rc = mnl_cb_run(buf, (size_t)n, r->seq, portid, cb, data);
	} while (rc > MNL_CB_STOP);
	return rc < 0 ? -1 : 0;
}

static int linkinfo_cb(const struct nlattr *a, void *data)
{
	struct link *l = data;

	if (mnl_attr_get_type(a) == IFLA_INFO_KIND && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		snprintf(l->kind, sizeof(l->kind), "%s", mnl_attr_get_str(a));
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link *l = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	l->found = true;
	l->ifindex = ifi->ifi_index;
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
		case IFLA_LINK_NETNSID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
				l->link_nsid = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO: mnl_attr_parse_nested(a, linkinfo_cb, l); break;
		}
	}
	return MNL_CB_OK;
}

/* RTM_GETLINK by name (name set) or index. A missing link is not an error. */
static int get_link(struct req *r, const char *name, int ifindex, struct link *out)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct ifinfomsg *ifi;

	memset(out, 0, sizeof(*out));
	out->link_nsid = -1;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK; /* the ACK ends the reply */
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = name ? 0 : ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (run(r, nlh, link_cb, out) < 0 && errno != ENODEV)
		return -1;
	return 0;
}

struct nsid_ctx {
	int nsid;
};

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nsid_ctx *c = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg)) {
		if (mnl_attr_get_type(a) == NETNSA_NSID && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			c->nsid = (int)mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

/* The id the socket's namespace gives the namespace `fd`; -1 when none. */
static int get_nsid(struct req *r, int fd)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct rtgenmsg *g;
	struct nsid_ctx c = {-1};

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK; /* the ACK ends the reply */
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, (uint32_t)fd);
	if (run(r, nlh, nsid_cb, &c) < 0)
		return -1;
	return c.nsid;
}

struct addr_ctx {
	int ifindex;
	struct ng_link_facts *f;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct addr_ctx *c = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWADDR || ifa->ifa_family != AF_INET6 ||
	    (int)ifa->ifa_index != c->ifindex || ifa->ifa_scope != RT_SCOPE_LINK)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
		if (mnl_attr_get_type(a) == IFA_ADDRESS && mnl_attr_get_payload_len(a) == 16 &&
		    c->f->n_link_local < NG_LINK_LOCAL_MAX) {
			struct ng_ip *ip = &c->f->link_local[c->f->n_link_local++];

			ip->fam = NG_V6;
			memcpy(ip->a, mnl_attr_get_payload(a), 16);
		}
	}
	return MNL_CB_OK;
}

static int get_link_locals(struct req *r, int ifindex, struct ng_link_facts *f)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct ifaddrmsg *ifa;
	struct addr_ctx c = {ifindex, f};

	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET6;
	return run(r, nlh, addr_cb, &c);
}

static int open_rtnl(void *data)
{
	struct req *r = data;

	r->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!r->nl)
		return -1;
	if (mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(r->nl);
		r->nl = NULL;
		return -1;
	}
	return 0;
}

#define WHY(...) snprintf(why, why_len, __VA_ARGS__)

/* Steps 2-4 of the proof (the pod's side is read): see peer.h. */
static int find_peer(struct req *pod, struct req *node, int pod_fd, const struct link *l,
		     struct ng_link_facts *out, char *why, size_t why_len)
{
	int self_fd, node_in_pod, pod_in_node;
	struct link peer;

	if (strcmp(l->kind, "veth") != 0) {
		WHY("%s is a%s %s device, not a veth: no per-pod device on the node's side", l->name,
		    l->kind[0] ? "" : "n", l->kind[0] ? l->kind : "unknown kind of");
		return 0;
	}
	if (l->link <= 0 || l->link_nsid < 0) {
		WHY("%s is a veth whose peer is in the pod's own namespace", l->name);
		return 0;
	}
	/* The calling thread's namespace: in the agent, /proc/self is the
	 * main thread's, which may be inside another pod's namespace just now. */
	self_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self_fd < 0)
		return -1;
	node_in_pod = get_nsid(pod, self_fd);
	close(self_fd);
	if (node_in_pod < 0 || node_in_pod != l->link_nsid) {
		WHY("the peer of %s is in another namespace than the node's (netnsid %d, the node is %d)",
		    l->name, l->link_nsid, node_in_pod);
		return 0;
	}
	pod_in_node = get_nsid(node, pod_fd);
	if (get_link(node, NULL, l->link, &peer) < 0)
		return -1;
	if (!peer.found || strcmp(peer.kind, "veth") != 0 || peer.link != l->ifindex || pod_in_node < 0 ||
	    peer.link_nsid != pod_in_node) {
		WHY("ifindex %d in the node's namespace is not the veth peer of the pod's %s", l->link,
		    l->name);
		return 0;
	}
	snprintf(out->peer, sizeof(out->peer), "%s", peer.name);
	out->peer_ifindex = peer.ifindex;
	return 0;
}

int ng_peer_find(int pod_netns_fd, const char *ifname, struct ng_link_facts *out, char *why, size_t why_len,
		 struct ng_err *err)
{
	struct req pod = {.seq = 1}, node = {.seq = 1};
	struct link l;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	WHY("-");
	if (ng_netns_run(pod_netns_fd, open_rtnl, &pod, err) < 0 || !pod.nl)
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the pod's namespace");
	if (open_rtnl(&node) < 0) {
		mnl_socket_close(pod.nl);
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the node's namespace");
	}
	if (get_link(&pod, ifname, 0, &l) < 0) {
		ng_fail(err, NG_E_NETNS, "reading interface %s in the pod's namespace failed: %s", ifname,
			strerror(errno));
	} else if (!l.found) {
		ng_fail(err, NG_E_NETNS, "interface %s (CNI_IFNAME) is not in the pod's network namespace",
			ifname);
	} else {
		memcpy(out->mac, l.mac, 6);
		out->have_mac = l.have_mac;
		out->ifindex = l.ifindex;
		if (get_link_locals(&pod, l.ifindex, out) < 0 ||
		    find_peer(&pod, &node, pod_netns_fd, &l, out, why, why_len) < 0)
			ng_fail(err, NG_E_NETNS, "reading the link of %s failed: %s", ifname,
				strerror(errno));
		else
			rc = 0;
	}
	mnl_socket_close(pod.nl);
	mnl_socket_close(node.nl);
	return rc;
}

int ng_link_read_here(const char *ifname, struct ng_link_facts *out, struct ng_err *err)
{
	struct req here = {.seq = 1};
	struct link l;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (open_rtnl(&here) < 0)
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket: %s", strerror(errno));
	if (get_link(&here, ifname, 0, &l) < 0 || !l.found) {
		ng_fail(err, NG_E_NETNS, "interface %s is not in the pod's network namespace", ifname);
	} else {
		memcpy(out->mac, l.mac, 6);
		out->have_mac = l.have_mac;
		out->ifindex = l.ifindex;
		rc = get_link_locals(&here, l.ifindex, out) < 0
			     ? ng_fail(err, NG_E_NETNS, "reading the addresses of %s failed: %s", ifname,
				       strerror(errno))
			     : 0;
	}
	mnl_socket_close(here.nl);
	return rc;
}
