#include "kernel/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kernel/nl_netns.h"
#include "kernel/rtnl.h"

#define WHY(...) snprintf(why, why_len, __VA_ARGS__)

struct ll_ctx {
	int ifindex;
	struct ng_link_facts *f;
};

static int ll_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ll_ctx *c = data;
	struct ng_rtnl_addr a;

	if (ng_rtnl_addr_parse(nlh, &a) && a.ifindex == c->ifindex && a.scope == RT_SCOPE_LINK &&
	    a.have_address && a.address.fam == NG_V6 && c->f->n_link_local < NG_LINK_LOCAL_MAX)
		c->f->link_local[c->f->n_link_local++] = a.address;
	return 0;
}

static int read_link_locals(struct ng_nl *nl, void *data, struct ng_err *err)
{
	struct ll_ctx *c = data;

	c->f->n_link_local = 0; /* a read again starts from scratch */
	return ng_rtnl_dump(nl, RTM_GETADDR, AF_INET6, ll_cb, c, err);
}

/* Step 1, the pod's side: `ifname`'s link (*l) and its facts. 0; 1 when
 * there is no such interface; -1 with err (the reason only). */
static int read_pod_side(struct ng_nl *nl, const char *ifname, struct ng_rtnl_link *l,
			 struct ng_link_facts *out, struct ng_err *err)
{
	struct ll_ctx c = {0, out};
	int rc = ng_rtnl_get_link(nl, ifname, 0, l, err);

	if (rc != 0)
		return rc;
	memcpy(out->mac, l->mac, 6);
	out->have_mac = l->have_mac;
	out->ifindex = l->ifindex;
	c.ifindex = l->ifindex;
	return ng_nl_read_again(nl, read_link_locals, &c, err) < 0 ? -1 : 0;
}

/* An id the kernel would not say proves nothing: -1 (no id), never an
 * error, so an unproved peer is "no per-pod device", as it always was. */
static int nsid_of(struct ng_nl *nl, int netns_fd)
{
	struct ng_err ignored = {0};
	int id = -1;

	return ng_rtnl_get_nsid(nl, netns_fd, &id, &ignored) < 0 ? -1 : id;
}

/* Steps 2-4 of the proof (the pod's side is read): see peer.h. */
static int find_peer(struct ng_nl *pod, struct ng_nl *node, int pod_ns, int node_ns,
		     const struct ng_rtnl_link *l, struct ng_link_facts *out, char *why, size_t why_len,
		     struct ng_err *err)
{
	int node_in_pod, pod_in_node, rc;
	struct ng_rtnl_link peer = {0};

	if (strcmp(l->kind, "veth") != 0) {
		WHY("%s is a%s %s device, not a veth: no per-pod device on the node's side", l->name,
		    l->kind[0] ? "" : "n", l->kind[0] ? l->kind : "unknown kind of");
		return 0;
	}
	if (l->link <= 0 || l->link_nsid < 0) {
		WHY("%s is a veth whose peer is in the pod's own namespace", l->name);
		return 0;
	}
	node_in_pod = nsid_of(pod, node_ns);
	if (node_in_pod < 0 || node_in_pod != l->link_nsid) {
		WHY("the peer of %s is in another namespace than the node's (netnsid %d, the node is %d)",
		    l->name, l->link_nsid, node_in_pod);
		return 0;
	}
	pod_in_node = nsid_of(node, pod_ns);
	rc = ng_rtnl_get_link(node, NULL, l->link, &peer, err);
	if (rc < 0)
		return -1;
	if (rc == 1 || strcmp(peer.kind, "veth") != 0 || peer.link != l->ifindex || pod_in_node < 0 ||
	    peer.link_nsid != pod_in_node) {
		WHY("ifindex %d in the node's namespace is not the veth peer of the pod's %s", l->link,
		    l->name);
		return 0;
	}
	snprintf(out->peer, sizeof(out->peer), "%s", peer.name);
	out->peer_ifindex = peer.ifindex;
	return 0;
}

int ng_peer_prove(struct ng_nl *pod, struct ng_nl *node, int pod_ns, int node_ns, const char *ifname,
		  struct ng_link_facts *out, char *why, size_t why_len, struct ng_err *err)
{
	struct ng_err e = {0};
	struct ng_rtnl_link l = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	WHY("-");
	rc = read_pod_side(pod, ifname, &l, out, &e);
	if (rc < 0)
		return ng_fail(err, NG_E_NETNS, "reading interface %s in the pod's namespace failed: %s",
			       ifname, e.msg);
	if (rc == 1)
		return ng_fail(err, NG_E_NETNS,
			       "interface %s (CNI_IFNAME) is not in the pod's network namespace", ifname);
	if (find_peer(pod, node, pod_ns, node_ns, &l, out, why, why_len, &e) < 0)
		return ng_fail(err, NG_E_NETNS, "reading the link of %s failed: %s", ifname, e.msg);
	return 0;
}

int ng_peer_find(int pod_netns_fd, const char *ifname, struct ng_link_facts *out, char *why, size_t why_len,
		 struct ng_err *err)
{
	struct ng_nl pod = {.fd = -1}, node = {.fd = -1};
	int node_ns, rc;

	memset(out, 0, sizeof(*out));
	WHY("-");
	if (ng_nl_open_proto_netns(pod_netns_fd, NETLINK_ROUTE, 0, &pod, err) < 0)
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the pod's namespace");
	if (ng_nl_open_proto(&node, NETLINK_ROUTE, 0, err) < 0) {
		ng_nl_close(&pod);
		return ng_fail(err, NG_E_NETNS, "cannot open an rtnetlink socket in the node's namespace");
	}
	/* The calling thread's namespace: in the agent, /proc/self is the
	 * main thread's, which may be inside another pod's namespace just now. */
	node_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (node_ns < 0)
		rc = ng_fail(err, NG_E_NETNS, "reading the link of %s failed: %s", ifname, strerror(errno));
	else
		rc = ng_peer_prove(&pod, &node, pod_netns_fd, node_ns, ifname, out, why, why_len, err);
	if (node_ns >= 0)
		close(node_ns);
	ng_nl_close(&pod);
	ng_nl_close(&node);
	return rc;
}

int ng_link_read(struct ng_nl *nl, const char *ifname, struct ng_link_facts *out, struct ng_err *err)
{
	struct ng_err e = {0};
	struct ng_rtnl_link l = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_pod_side(nl, ifname, &l, out, &e);
	if (rc == 1)
		return ng_fail(err, NG_E_NETNS, "interface %s is not in the pod's network namespace", ifname);
	if (rc < 0)
		return ng_fail(err, NG_E_NETNS, "reading the link of %s failed: %s", ifname, e.msg);
	return 0;
}

int ng_link_read_here(const char *ifname, struct ng_link_facts *out, struct ng_err *err)
{
	struct ng_err e = {0};
	struct ng_nl nl = {.fd = -1};
	int rc;

	memset(out, 0, sizeof(*out));
	if (ng_nl_open_proto(&nl, NETLINK_ROUTE, 0, &e) < 0)
		return ng_fail(err, NG_E_NETNS, "%s", e.msg);
	rc = ng_link_read(&nl, ifname, out, err);
	ng_nl_close(&nl);
	return rc;
}
