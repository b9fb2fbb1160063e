#include "kernel/ctdump.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <string.h>
#include <sys/socket.h>

struct ct_ctx {
	ng_ct_fn fn;
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
	if (l4 == 6 || l4 == 17)
		c->fn(&dst, l4, dport, c->data);
	return 0;
}

int ng_ct_flows(struct ng_nl *nl, ng_ct_fn fn, void *data, struct ng_err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;
	struct ct_ctx c = {fn, data};

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC; /* both families */
	g->version = NFNETLINK_V0;
	return ng_nl_dump(nl, nlh, one, &c, err) < 0 ? -1 : 0;
}
