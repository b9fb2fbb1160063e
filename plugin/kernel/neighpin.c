#include "kernel/neighpin.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "kernel/netns.h"

#define MAX_GW 16

struct pin {
	struct ng_ip gw[MAX_GW];
	int ifindex[MAX_GW]; /* node-side interface holding gw[i], 0: none */
	uint8_t mac[MAX_GW][6];
	bool have_mac[MAX_GW];
	size_t n;
	const char *ifname;
	size_t pinned;
	struct ng_err *err;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct pin *p = data;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(*ifa)) {
		size_t len = mnl_attr_get_payload_len(attr);

		if (mnl_attr_get_type(attr) != IFA_ADDRESS && mnl_attr_get_type(attr) != IFA_LOCAL)
			continue;
		for (size_t i = 0; i < p->n; i++)
			if (len == ng_ip_len(p->gw[i].fam) &&
			    (ifa->ifa_family == AF_INET) == (p->gw[i].fam == NG_V4) &&
			    memcmp(mnl_attr_get_payload(attr), p->gw[i].a, len) == 0)
				p->ifindex[i] = (int)ifa->ifa_index;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct pin *p = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(attr) != IFLA_ADDRESS || mnl_attr_get_payload_len(attr) != 6)
			continue;
		for (size_t i = 0; i < p->n; i++)
			if (p->ifindex[i] == ifi->ifi_index) {
				memcpy(p->mac[i], mnl_attr_get_payload(attr), 6);
				p->have_mac[i] = true;
			}
	}
	return MNL_CB_OK;
}

/* One request; its replies (a dump, or the ack) through cb. 0 or -errno. */
static int talk(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nl);
	ssize_t ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((ret = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		int rc = mnl_cb_run(buf, (size_t)ret, seq, portid, cb, data);

		if (rc < 0)
			return -errno;
		if (rc == MNL_CB_STOP)
			return 0;
	}
	return ret < 0 ? -errno : 0;
}

static struct mnl_socket *open_route(void)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (nl && mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return NULL;
	}
	return nl;
}

static int dump(struct mnl_socket *nl, uint16_t type, size_t hdrlen, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	mnl_nlmsg_put_extra_header(nlh, hdrlen); /* family 0: all */
	return talk(nl, nlh, cb, data);
}

/* The node's addresses, then its links, on a fresh socket; all again when
 * the kernel says a dump was interrupted (EINTR: addresses changed
 * meanwhile, as when many pods start at once; the rest of that dump would
 * still be queued on the old socket). */
static int read_node(struct pin *p)
{
	int rc = -EINTR;

	for (int attempt = 0; attempt < 20 && rc == -EINTR; attempt++) {
		struct mnl_socket *nl = open_route();

		if (!nl)
			return -errno;
		rc = dump(nl, RTM_GETADDR, sizeof(struct ifaddrmsg), addr_cb, p);
		if (rc == 0)
			rc = dump(nl, RTM_GETLINK, sizeof(struct ifinfomsg), link_cb, p);
		mnl_socket_close(nl);
	}
	return rc;
}

/* Inside the pod: ip neigh replace GW lladdr MAC nud permanent dev IFNAME. */
static int pin_here(void *data)
{
	struct pin *p = data;
	struct mnl_socket *nl = open_route();
	int ifindex = (int)if_nametoindex(p->ifname), rc = 0;

	if (!nl)
		return ng_fail(p->err, NG_E_NETNS, "pinning the gateway: cannot open rtnetlink: %s",
			       strerror(errno));
	if (ifindex == 0) {
		mnl_socket_close(nl);
		return ng_fail(p->err, NG_E_NETNS, "pinning the gateway: no interface %s in the pod",
			       p->ifname);
	}
	for (size_t i = 0; i < p->n && rc == 0; i++) {
		char buf[MNL_SOCKET_BUFFER_SIZE];
		struct nlmsghdr *nlh;
		struct ndmsg *nd;

		if (!p->have_mac[i])
			continue;
		memset(buf, 0, sizeof(buf));
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_NEWNEIGH;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
		nlh->nlmsg_seq = (uint32_t)time(NULL) + (uint32_t)i;
		nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
		nd->ndm_family = p->gw[i].fam == NG_V4 ? AF_INET : AF_INET6;
		nd->ndm_ifindex = ifindex;
		nd->ndm_state = NUD_PERMANENT;
		mnl_attr_put(nlh, NDA_DST, ng_ip_len(p->gw[i].fam), p->gw[i].a);
		mnl_attr_put(nlh, NDA_LLADDR, 6, p->mac[i]);
		rc = talk(nl, nlh, NULL, NULL);
		if (rc < 0) {
			char ip[NG_IP_STRLEN];

			ng_ip_format(&p->gw[i], ip, sizeof(ip));
			ng_fail(p->err, NG_E_NETNS, "pinning the gateway %s on %s: %s", ip, p->ifname,
				strerror(-rc));
		} else {
			p->pinned++;
		}
	}
	mnl_socket_close(nl);
	return rc < 0 ? -1 : 0;
}

int ng_neigh_pin_gateways(int pod_netns_fd, const char *ifname, const struct ng_ip *gws, size_t n,
			  size_t *pinned, struct ng_err *err)
{
	struct pin p = {.ifname = ifname, .err = err};
	int rc;

	*pinned = 0;
	for (size_t i = 0; i < n && p.n < MAX_GW; i++)
		p.gw[p.n++] = gws[i];
	if (p.n == 0)
		return 0;
	rc = read_node(&p);
	if (rc < 0)
		return ng_fail(err, NG_E_NETNS, "pinning the gateway: reading the node's addresses: %s",
			       strerror(-rc));
	if (ng_netns_run(pod_netns_fd, pin_here, &p, err) < 0)
		return -1;
	*pinned = p.pinned;
	return 0;
}
