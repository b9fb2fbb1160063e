/* rtnetlink played by the fake socket (fake_kernel.h): one network
 * namespace's links, addresses and namespace ids, answered as the kernel
 * answers RTM_GETLINK (one, or a dump), RTM_GETADDR and RTM_GETROUTE dumps,
 * RTM_GETNSID and RTM_NEWNEIGH; a forger in the namespace can answer a
 * request first. Ifindexes are per namespace: two worlds may use the same
 * ones, as real namespaces do. */
#ifndef NG_TEST_FAKE_RTNL_H
#define NG_TEST_FAKE_RTNL_H

#include "fake_kernel.h"

#include <arpa/inet.h> // IWYU pragma: export
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>

#include "base/addr.h"

struct flink {
	int ifindex;
	const char *name, *kind; /* kind NULL: no IFLA_LINKINFO */
	uint8_t mac[6];
	bool have_mac;
	int link;      /* IFLA_LINK, 0: none */
	bool has_nsid; /* IFLA_LINK_NETNSID present */
	int link_nsid;
};

struct faddr {
	int ifindex;
	const char *address, *local; /* IFA_ADDRESS, IFA_LOCAL; NULL: absent */
	uint8_t plen, scope;
};

struct fneigh { /* an RTM_NEWNEIGH as the kernel saw it */
	int ifindex;
	uint8_t family, state;
	uint16_t flags;
	struct ng_ip dst;
	uint8_t mac[6];
};

struct fns {
	struct flink links[8];
	int nlinks;
	struct faddr addrs[8];
	int naddrs;
	struct { /* RTM_GETNSID: NETNSA_FD -> the id this namespace gives it */
		int fd, id;
	} nsid[4];
	int nnsid;
	int neigh_errno;     /* RTM_NEWNEIGH answered with this... */
	int neigh_fail_from; /* ... from the n-th on (0-based) */
	int getlink_errno;   /* RTM_GETLINK of one link answered with this */
	int addr_dump_errno; /* the address dump answered with this */
	int addr_intr;       /* address dumps marked interrupted (NLM_F_DUMP_INTR), then as usual */
	int addr_dumps;      /* address dumps answered */
	int link_dumps;      /* link dumps answered */
	int addr_vanish;     /* addrs[addr_vanish - 1] is removed by what interrupted the dump */
	/* A forger: answers the next request of this type first, as the
	 * kernel would, from another port id. */
	uint16_t forge_type;
	struct flink forged_link;
	int forged_nsid;
	struct fneigh neigh[8];
	int nneigh;
	struct fsock sock;
};

__attribute__((unused)) static void put_link(struct fsock *s, uint32_t seq, uint16_t flags,
					     const struct flink *l)
{
	struct nlmsghdr *nlh = fs_msg(s, RTM_NEWLINK, flags, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

	ifi->ifi_index = l->ifindex;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, l->name);
	if (l->have_mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, l->mac);
	if (l->link)
		mnl_attr_put_u32(nlh, IFLA_LINK, (uint32_t)l->link);
	if (l->has_nsid)
		mnl_attr_put_u32(nlh, IFLA_LINK_NETNSID, (uint32_t)l->link_nsid);
	if (l->kind) {
		struct nlattr *nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, l->kind);
		mnl_attr_nest_end(nlh, nest);
	}
	fs_end(s, nlh);
}

__attribute__((unused)) static void put_ip_attr(struct nlmsghdr *nlh, uint16_t type, const char *text)
{
	struct ng_ip ip;

	assert_int_equal(ng_ip_parse(text, &ip), 0);
	mnl_attr_put(nlh, type, ng_ip_len(ip.fam), ip.a);
}

__attribute__((unused)) static uint8_t addr_family(const struct faddr *a)
{
	return strchr(a->address ? a->address : a->local, ':') ? AF_INET6 : AF_INET;
}

__attribute__((unused)) static void put_addr(struct fsock *s, uint32_t seq, uint16_t flags,
					     const struct faddr *a)
{
	struct nlmsghdr *nlh = fs_msg(s, RTM_NEWADDR, flags, seq);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));

	ifa->ifa_family = addr_family(a);
	ifa->ifa_index = (uint32_t)a->ifindex;
	ifa->ifa_prefixlen = a->plen;
	ifa->ifa_scope = a->scope;
	if (a->address)
		put_ip_attr(nlh, IFA_ADDRESS, a->address);
	if (a->local)
		put_ip_attr(nlh, IFA_LOCAL, a->local);
	fs_end(s, nlh);
}

__attribute__((unused)) static void put_nsid(struct fsock *s, uint32_t seq, int id)
{
	struct nlmsghdr *nlh = fs_msg(s, RTM_NEWNSID, 0, seq);
	struct rtgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_NSID, (uint32_t)id);
	fs_end(s, nlh);
}

__attribute__((unused)) static const struct flink *find_link(const struct fns *w, const char *name,
							     int ifindex)
{
	for (int i = 0; i < w->nlinks; i++)
		if (name ? strcmp(w->links[i].name, name) == 0 : w->links[i].ifindex == ifindex)
			return &w->links[i];
	return NULL;
}

__attribute__((unused)) static void answer_getlink(struct fns *w, const struct nlmsghdr *req)
{
	struct fsock *s = &w->sock;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(req);
	const struct nlattr *a;
	const char *name = NULL;
	const struct flink *l;

	if ((req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP) {
		w->link_dumps++;
		fs_dgram(s, 0);
		for (int i = 0; i < w->nlinks; i++)
			put_link(s, req->nlmsg_seq, NLM_F_MULTI, &w->links[i]);
		fs_done(s, req->nlmsg_seq, 0);
		return;
	}
	mnl_attr_for_each(a, req, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) == IFLA_IFNAME)
			name = mnl_attr_get_str(a);
	}
	l = find_link(w, name, ifi->ifi_index);
	fs_dgram(s, 0);
	if (w->getlink_errno || !l) {
		fs_ack(s, req->nlmsg_seq, w->getlink_errno ? w->getlink_errno : ENODEV);
		return;
	}
	put_link(s, req->nlmsg_seq, 0, l);
	fs_ack(s, req->nlmsg_seq, 0);
}

__attribute__((unused)) static void answer_getaddr(struct fns *w, const struct nlmsghdr *req)
{
	struct fsock *s = &w->sock;
	const struct ifaddrmsg *want = mnl_nlmsg_get_payload(req);
	uint16_t intr = w->addr_dumps++ < w->addr_intr ? NLM_F_DUMP_INTR : 0;

	/* One address per datagram: an interrupted dump is read to its end.
	 * The kernel marks only what it sends after it saw the change: here
	 * the first address goes out unmarked. */
	for (int i = 0, sent = 0; i < w->naddrs; i++) {
		if (want->ifa_family && want->ifa_family != addr_family(&w->addrs[i]))
			continue;
		fs_dgram(s, 0);
		put_addr(s, req->nlmsg_seq, NLM_F_MULTI | (sent++ ? intr : 0), &w->addrs[i]);
	}
	fs_dgram(s, 0);
	if (w->addr_dump_errno)
		fs_ack(s, req->nlmsg_seq, w->addr_dump_errno);
	else
		fs_done(s, req->nlmsg_seq, intr);
	if (intr && w->addr_vanish > 0) { /* the change that interrupted it */
		memmove(&w->addrs[w->addr_vanish - 1], &w->addrs[w->addr_vanish],
			(size_t)(w->naddrs - w->addr_vanish) * sizeof(w->addrs[0]));
		w->naddrs--;
		w->addr_vanish = 0;
	}
}

__attribute__((unused)) static void answer_getnsid(struct fns *w, const struct nlmsghdr *req)
{
	const struct nlattr *a;
	int fd = -1, id = -1; /* NETNSA_NSID_NOT_ASSIGNED */

	mnl_attr_for_each(a, req, sizeof(struct rtgenmsg)) {
		if (mnl_attr_get_type(a) == NETNSA_FD)
			fd = (int)mnl_attr_get_u32(a);
	}
	for (int i = 0; i < w->nnsid; i++)
		if (w->nsid[i].fd == fd)
			id = w->nsid[i].id;
	fs_dgram(&w->sock, 0);
	put_nsid(&w->sock, req->nlmsg_seq, id);
	fs_ack(&w->sock, req->nlmsg_seq, 0);
}

__attribute__((unused)) static void answer_newneigh(struct fns *w, const struct nlmsghdr *req)
{
	const struct ndmsg *nd = mnl_nlmsg_get_payload(req);
	struct fneigh *n = &w->neigh[w->nneigh++];
	const struct nlattr *a;

	assert_true(w->nneigh <= 8);
	memset(n, 0, sizeof(*n));
	n->ifindex = nd->ndm_ifindex;
	n->family = nd->ndm_family;
	n->state = (uint8_t)nd->ndm_state;
	n->flags = req->nlmsg_flags;
	mnl_attr_for_each(a, req, sizeof(*nd)) {
		if (mnl_attr_get_type(a) == NDA_DST) {
			n->dst.fam = mnl_attr_get_payload_len(a) == 4 ? NG_V4 : NG_V6;
			memcpy(n->dst.a, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
		} else if (mnl_attr_get_type(a) == NDA_LLADDR && mnl_attr_get_payload_len(a) == 6) {
			memcpy(n->mac, mnl_attr_get_payload(a), 6);
		}
	}
	fs_dgram(&w->sock, 0);
	fs_ack(&w->sock, req->nlmsg_seq, w->nneigh > w->neigh_fail_from ? w->neigh_errno : 0);
}

/* The forger's answer, queued before the kernel's: complete, acked, with
 * the request's own sequence number. */
__attribute__((unused)) static void forge(struct fns *w, const struct nlmsghdr *req)
{
	struct fsock *s = &w->sock;

	fs_dgram(s, FS_FORGER);
	if (req->nlmsg_type == RTM_GETLINK)
		put_link(s, req->nlmsg_seq, 0, &w->forged_link);
	else if (req->nlmsg_type == RTM_GETNSID)
		put_nsid(s, req->nlmsg_seq, w->forged_nsid);
	fs_ack(s, req->nlmsg_seq, 0);
	w->forge_type = 0;
}

__attribute__((unused)) static void rtnl_answer(struct fsock *s, const struct nlmsghdr *req)
{
	struct fns *w = s->world;

	if (w->forge_type && req->nlmsg_type == w->forge_type)
		forge(w, req);
	switch (req->nlmsg_type) {
	case RTM_GETLINK: answer_getlink(w, req); break;
	case RTM_GETADDR: answer_getaddr(w, req); break;
	case RTM_GETNSID: answer_getnsid(w, req); break;
	case RTM_NEWNEIGH: answer_newneigh(w, req); break;
	default: /* RTM_GETROUTE and the rest: nothing there */ fs_dgram(s, 0); fs_done(s, req->nlmsg_seq, 0);
	}
}

/* A transport onto world w (the fns must stay where it is). */
__attribute__((unused)) static void fns_open(struct fns *w, struct ng_nl *nl)
{
	w->sock.answer = rtnl_answer;
	w->sock.world = w;
	ng_nl_init_ops(nl, &fs_ops, &w->sock);
	nl->protocol = NETLINK_ROUTE;
}

__attribute__((unused)) static struct fns *fns_new(void)
{
	struct fns *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	return w;
}

/* Every answer was read: none is left for a later request to find. */
__attribute__((unused)) static void fns_free(struct fns *w)
{
	assert_int_equal(w->sock.qhead, w->sock.qtail);
	free(w);
}

__attribute__((unused)) static void fns_link(struct fns *w, struct flink l)
{
	assert_true(w->nlinks < 8);
	w->links[w->nlinks++] = l;
}

__attribute__((unused)) static void fns_addr(struct fns *w, struct faddr a)
{
	assert_true(w->naddrs < 8);
	w->addrs[w->naddrs++] = a;
}

__attribute__((unused)) static void fns_nsid(struct fns *w, int fd, int id)
{
	assert_true(w->nnsid < 4);
	w->nsid[w->nnsid].fd = fd;
	w->nsid[w->nnsid++].id = id;
}

#endif
