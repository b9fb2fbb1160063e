#include "kernel/ctlookup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <string.h>
#include <sys/socket.h>

/* CTA_FILTER_ORIG_FLAGS bits: the kernel's (net/netfilter/nf_internals.h,
 * not exported to user space, part of the ABI since Linux 5.8). */
#define CTA_FILTER_F_CTA_IP_DST    (1U << 1)
#define CTA_FILTER_F_CTA_PROTO_NUM (1U << 3)

struct ct_ctx {
	const struct ng_ip *dst;
	uint8_t proto;
	unsigned budget, read;
	bool cut;
	ng_ct_port_fn fn;
	void *data;
};

static const struct nlattr *nested(const struct nlattr *parent, uint16_t type)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, parent) {
		if (mnl_attr_get_type(a) == type)
			return a;
	}
	return NULL;
}

static int one(const struct nlmsghdr *nlh, void *data)
{
	struct ct_ctx *c = data;
	const struct nlattr *a, *orig = NULL, *proto_info = NULL, *ip, *proto, *x;
	struct ng_ip dst = {0};
	uint8_t l4 = 0;
	uint16_t dport = 0;

	if (++c->read > c->budget) {
		c->cut = true;
		return NG_NL_STOP; /* the rest is never copied out */
	}
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_ORIG)
			orig = a;
		else if (mnl_attr_get_type(a) == CTA_PROTOINFO)
			proto_info = a;
	}
	if (!orig || !(ip = nested(orig, CTA_TUPLE_IP)) || !(proto = nested(orig, CTA_TUPLE_PROTO)))
		return 0;
	if ((x = nested(ip, CTA_IP_V4_DST)) && mnl_attr_get_payload_len(x) == 4) {
		dst.fam = NG_V4;
		memcpy(dst.a, mnl_attr_get_payload(x), 4);
	} else if ((x = nested(ip, CTA_IP_V6_DST)) && mnl_attr_get_payload_len(x) == 16) {
		dst.fam = NG_V6;
		memcpy(dst.a, mnl_attr_get_payload(x), 16);
	} else {
		return 0;
	}
	if ((x = nested(proto, CTA_PROTO_NUM)) && mnl_attr_get_payload_len(x) >= 1)
		l4 = mnl_attr_get_u8(x);
	if ((x = nested(proto, CTA_PROTO_DST_PORT)) && mnl_attr_get_payload_len(x) >= 2)
		dport = ntohs(mnl_attr_get_u16(x));
	if (l4 == 6 && proto_info) {
		const struct nlattr *tcp = nested(proto_info, CTA_PROTOINFO_TCP), *st;

		if (tcp && (st = nested(tcp, CTA_PROTOINFO_TCP_STATE)) && mnl_attr_get_payload_len(st) >= 1) {
			uint8_t s = mnl_attr_get_u8(st);

			if (s == TCP_CONNTRACK_TIME_WAIT || s == TCP_CONNTRACK_CLOSE)
				return 0;
		}
	}
	/* The kernel filtered; a kernel older than the filter did not: the
	 * entry is checked here all the same. */
	if (l4 != c->proto || !ng_ip_eq(&dst, c->dst))
		return 0;
	if (!c->fn(dport, c->data)) {
		c->cut = true;
		return NG_NL_STOP;
	}
	return 0;
}

int ng_ct_flows_to(struct ng_nl *nl, const struct ng_ip *dst, uint8_t proto, unsigned budget,
		   ng_ct_port_fn fn, void *data, bool *cut, struct ng_err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;
	struct nlattr *tuple, *nest;
	struct ct_ctx c = {.dst = dst, .proto = proto, .budget = budget, .fn = fn, .data = data};
	int rc;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = dst->fam == NG_V4 ? AF_INET : AF_INET6;
	g->version = NFNETLINK_V0;
	/* The original direction's destination address and protocol: the
	 * kernel walks its table but copies out only these entries. */
	tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, dst->fam == NG_V4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, (size_t)ng_ip_len(dst->fam),
		     dst->a);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_nest_end(nlh, tuple);
	nest = mnl_attr_nest_start(nlh, CTA_FILTER);
	mnl_attr_put_u32(nlh, CTA_FILTER_ORIG_FLAGS, CTA_FILTER_F_CTA_IP_DST | CTA_FILTER_F_CTA_PROTO_NUM);
	mnl_attr_put_u32(nlh, CTA_FILTER_REPLY_FLAGS, 0);
	mnl_attr_nest_end(nlh, nest);
	rc = ng_nl_dump(nl, nlh, one, &c, err);
	*cut = c.cut;
	if (rc == -ENOENT)
		return 0;
	return rc < 0 ? -1 : (int)(c.read > budget ? budget : c.read);
}
