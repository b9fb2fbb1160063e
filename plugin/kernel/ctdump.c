#include "kernel/ctdump.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* One live flow: its original destination, and where its original
 * tuple and zone sit in the message (for a delete). */
struct ct_flow {
	struct ng_ip src, dst;
	uint8_t l4;
	uint16_t dport;
	const struct nlattr *orig, *zone;
	uint8_t family;
};

typedef void (*ct_flow_fn)(const struct ct_flow *f, void *data);

struct ct_ctx {
	ct_flow_fn fn;
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
	const struct nlattr *a, *orig = NULL, *proto_info = NULL, *zone = NULL, *ip, *proto, *x;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	struct ng_ip dst = {0}, src = {0};
	uint8_t l4 = 0;
	uint16_t dport = 0;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return 0;
	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_ORIG)
			orig = a;
		else if (mnl_attr_get_type(a) == CTA_PROTOINFO)
			proto_info = a;
		else if (mnl_attr_get_type(a) == CTA_ZONE)
			zone = a;
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
	if ((x = nested(ip, dst.fam == NG_V4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC)) &&
	    mnl_attr_get_payload_len(x) == ng_ip_len(dst.fam)) {
		src.fam = dst.fam;
		memcpy(src.a, mnl_attr_get_payload(x), ng_ip_len(dst.fam));
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
	if (l4 == 6 || l4 == 17) {
		struct ct_flow f = {src, dst, l4, dport, orig, zone, g->nfgen_family};

		c->fn(&f, c->data);
	}
	return 0;
}

static int each_flow(struct ng_nl *nl, ct_flow_fn fn, void *data, struct ng_err *err)
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

struct flows_ctx {
	ng_ct_fn fn;
	void *data;
};

static void to_flows(const struct ct_flow *f, void *data)
{
	struct flows_ctx *c = data;

	c->fn(&f->dst, f->l4, f->dport, c->data);
}

int ng_ct_flows(struct ng_nl *nl, ng_ct_fn fn, void *data, struct ng_err *err)
{
	struct flows_ctx c = {fn, data};

	return each_flow(nl, to_flows, &c, err);
}

/* A delete request for one flow: its family, original tuple and zone,
 * copied from the dump. */
struct ct_del {
	char msg[512];
};

struct cut_ctx {
	ng_ct_cut_fn cut;
	void *data;
	struct ct_del *v;
	size_t n, cap;
	bool oom;
};

static void collect(const struct ct_flow *f, void *data)
{
	struct cut_ctx *c = data;
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;
	size_t need = MNL_ALIGN(sizeof(*nlh)) + MNL_ALIGN(sizeof(*g)) + MNL_ALIGN(f->orig->nla_len) +
		      (f->zone ? MNL_ALIGN(f->zone->nla_len) : 0);
	struct ng_flow fl = {f->src, f->dst, f->l4, f->dport};

	if (c->oom || !c->cut(&fl, c->data) || need > sizeof(c->v[0].msg))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct ct_del *nv = realloc(c->v, cap * sizeof(*nv));

		if (!nv) {
			c->oom = true;
			return;
		}
		c->v = nv;
		c->cap = cap;
	}
	memset(c->v[c->n].msg, 0, sizeof(c->v[c->n].msg));
	nlh = mnl_nlmsg_put_header(c->v[c->n].msg);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_DELETE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = f->family;
	g->version = NFNETLINK_V0;
	/* The nested tuple as the kernel wrote it: the same bytes name the
	 * same flow back to it. */
	memcpy((char *)nlh + nlh->nlmsg_len, f->orig, f->orig->nla_len);
	nlh->nlmsg_len += MNL_ALIGN(f->orig->nla_len);
	if (f->zone) {
		memcpy((char *)nlh + nlh->nlmsg_len, f->zone, f->zone->nla_len);
		nlh->nlmsg_len += MNL_ALIGN(f->zone->nla_len);
	}
	c->n++;
}

int ng_ct_cut(struct ng_nl *nl, ng_ct_cut_fn cut, void *data, unsigned *n, struct ng_err *err)
{
	struct cut_ctx c = {.cut = cut, .data = data};
	int rc = each_flow(nl, collect, &c, err);

	*n = 0;
	if (rc == 0 && c.oom)
		rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
	for (size_t i = 0; rc == 0 && i < c.n; i++) {
		struct ng_err e2 = {0};

		if (ng_nl_request(nl, (struct nlmsghdr *)c.v[i].msg, NULL, NULL, &e2) == 0)
			(*n)++;
		else if (nl->answer_errno != ENOENT)
			rc = ng_fail(err, NG_E_KERNEL, "deleting a conntrack entry: %s", e2.msg);
	}
	free(c.v);
	return rc;
}
