#include "kernel/neighpin.h"

#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "kernel/nl_netns.h"
#include "kernel/rtnl.h"

#define MAX_GW 16

struct pin {
	struct ng_ip gw[MAX_GW];
	int ifindex[MAX_GW]; /* node-side interface holding gw[i], 0: none */
	uint8_t mac[MAX_GW][6];
	bool have_mac[MAX_GW];
	size_t n;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct pin *p = data;
	struct ng_rtnl_addr a;

	if (!ng_rtnl_addr_parse(nlh, &a))
		return 0;
	for (size_t i = 0; i < p->n; i++)
		if ((a.have_address && ng_ip_eq(&a.address, &p->gw[i])) ||
		    (a.have_local && ng_ip_eq(&a.local, &p->gw[i])))
			p->ifindex[i] = a.ifindex;
	return 0;
}

/* The MAC of each node-side interface found holding a gateway: one
 * request per interface, never a dump of the node's links (a node of 200
 * pods has 200 veths: their dump was most of what ADD's own time gained
 * with the pods on the node). */
static int read_macs(struct ng_nl *nl, struct pin *p, struct ng_err *err)
{
	for (size_t i = 0; i < p->n; i++) {
		struct ng_rtnl_link l = {0};
		int rc;

		if (p->ifindex[i] <= 0 || p->have_mac[i])
			continue;
		rc = ng_rtnl_get_link(nl, NULL, p->ifindex[i], &l, err);
		if (rc < 0)
			return -1;
		if (rc == 1 || !l.have_mac)
			continue; /* gone meanwhile, or no link-layer address (a tunnel) */
		for (size_t j = i; j < p->n; j++)
			if (p->ifindex[j] == p->ifindex[i]) {
				memcpy(p->mac[j], l.mac, 6);
				p->have_mac[j] = true;
			}
	}
	return 0;
}

/* The node's addresses, then the links that hold a gateway; again from
 * scratch when the kernel says the address dump was interrupted
 * (addresses changed meanwhile, as when many pods start at once). */
static int read_node(struct ng_nl *nl, void *data, struct ng_err *err)
{
	struct pin *p = data;
	int rc;

	memset(p->ifindex, 0, sizeof(p->ifindex));
	memset(p->have_mac, 0, sizeof(p->have_mac));
	rc = ng_rtnl_dump(nl, RTM_GETADDR, AF_UNSPEC, addr_cb, p, err);
	if (rc == 0)
		rc = read_macs(nl, p, err);
	return rc;
}

/* In the pod: ip neigh replace GW lladdr MAC nud permanent dev IFNAME, for
 * each gateway the node holds. */
static int pin_pod(struct ng_nl *pod, const struct pin *p, const char *ifname, size_t *pinned,
		   struct ng_err *err)
{
	struct ng_rtnl_link l = {0};
	struct ng_err e = {0};
	int rc = ng_rtnl_get_link(pod, ifname, 0, &l, &e);

	if (rc < 0)
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: reading %s in the pod: %s", ifname,
			       e.msg);
	if (rc == 1)
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: no interface %s in the pod", ifname);
	for (size_t i = 0; i < p->n; i++) {
		char ip[NG_IP_STRLEN];

		if (!p->have_mac[i])
			continue;
		if (ng_rtnl_neigh_permanent(pod, l.ifindex, &p->gw[i], p->mac[i], &e) < 0) {
			ng_ip_format(&p->gw[i], ip, sizeof(ip));
			return ng_fail(err, NG_E_NETNS, "pinning the gateway %s on %s: %s", ip, ifname,
				       e.msg);
		}
		(*pinned)++;
	}
	return 0;
}

int ng_neigh_pin(struct ng_nl *node, struct ng_nl *pod, const char *ifname, const struct ng_ip *gws, size_t n,
		 size_t *pinned, struct ng_err *err)
{
	struct pin p = {0};
	struct ng_err e = {0};
	size_t count = 0;

	*pinned = 0;
	for (size_t i = 0; i < n && p.n < MAX_GW; i++)
		p.gw[p.n++] = gws[i];
	if (p.n == 0)
		return 0;
	if (ng_nl_read_again(node, read_node, &p, &e) < 0)
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: reading the node's addresses: %s",
			       e.msg);
	if (pin_pod(pod, &p, ifname, &count, err) < 0)
		return -1;
	*pinned = count;
	return 0;
}

int ng_neigh_pin_gateways(int pod_netns_fd, const char *ifname, const struct ng_ip *gws, size_t n,
			  size_t *pinned, struct ng_err *err)
{
	struct ng_nl node = {.fd = -1}, pod = {.fd = -1};
	struct ng_err e = {0};
	int rc;

	*pinned = 0;
	if (n == 0)
		return 0;
	if (ng_nl_open_proto(&node, NETLINK_ROUTE, 0, &e) < 0)
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: %s", e.msg);
	if (ng_nl_open_proto_netns(pod_netns_fd, NETLINK_ROUTE, 0, &pod, &e) < 0) {
		ng_nl_close(&node);
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: %s", e.msg);
	}
	rc = ng_neigh_pin(&node, &pod, ifname, gws, n, pinned, err);
	ng_nl_close(&pod);
	ng_nl_close(&node);
	return rc;
}
