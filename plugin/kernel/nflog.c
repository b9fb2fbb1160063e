#include "kernel/nflog.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/nlwalk.h"
#include "kernel/nl_netns.h"

#define PACKET_TYPE ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET)

/* ---- parsing -------------------------------------------------------------- */

#define ETH_HLEN_ 14

/* Addresses, protocol and ports of the IP packet at p[0..len). */
static void read_ip(struct ng_nflog_record *r, const uint8_t *p, size_t len, int fam)
{
	size_t l4;

	if (fam == NG_V4 && len >= 20 && (p[0] >> 4) == 4) {
		r->src.fam = r->dst.fam = NG_V4;
		memcpy(r->src.a, p + 12, 4);
		memcpy(r->dst.a, p + 16, 4);
		r->proto = p[9];
		l4 = (size_t)(p[0] & 0x0f) * 4;
	} else if (fam == NG_V6 && len >= 40 && (p[0] >> 4) == 6) {
		r->src.fam = r->dst.fam = NG_V6;
		memcpy(r->src.a, p + 8, 16);
		memcpy(r->dst.a, p + 24, 16);
		r->proto = p[6];
		l4 = 40;
	} else {
		return;
	}
	if ((r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP) && l4 >= 20 && len >= l4 + 4) {
		r->have_ports = true;
		r->sport = (uint16_t)(p[l4] << 8 | p[l4 + 1]);
		r->dport = (uint16_t)(p[l4 + 2] << 8 | p[l4 + 3]);
	}
}

/* Addresses, protocol and ports out of the logged bytes. An inet table's
 * copy starts at the network header; a netdev table's at the Ethernet
 * header on egress (the frame as it will be sent) and at the network
 * header on ingress (the stack pulled the Ethernet header already). */
static void read_payload(struct ng_nflog_record *r)
{
	const uint8_t *p = r->payload;
	size_t len = r->len;

	if (r->family == NFPROTO_IPV4 || r->family == NFPROTO_IPV6) {
		read_ip(r, p, len, r->family == NFPROTO_IPV4 ? NG_V4 : NG_V6);
		return;
	}
	if (r->family != NFPROTO_NETDEV || !r->have_hook)
		return;
	if (r->hook == NF_NETDEV_EGRESS) {
		if (len < ETH_HLEN_)
			return;
		r->ethertype = (uint16_t)(p[12] << 8 | p[13]);
		p += ETH_HLEN_;
		len -= ETH_HLEN_;
	} else {
		r->ethertype = r->hw_protocol;
	}
	if (r->ethertype == 0x0800)
		read_ip(r, p, len, NG_V4);
	else if (r->ethertype == 0x86dd)
		read_ip(r, p, len, NG_V6);
}

static uint32_t be32_attr(const struct nlattr *a)
{
	return mnl_attr_validate(a, MNL_TYPE_U32) == 0 ? ntohl(mnl_attr_get_u32(a)) : 0;
}

bool ng_nflog_parse(const struct nlmsghdr *nlh, struct ng_nflog_record *r)
{
	const struct nfgenmsg *g;
	const struct nlattr *a;

	memset(r, 0, sizeof(*r));
	if (nlh->nlmsg_type != PACKET_TYPE || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*g)))
		return false;
	g = mnl_nlmsg_get_payload(nlh);
	r->group = ntohs(g->res_id);
	r->family = g->nfgen_family;
	mnl_attr_for_each(a, nlh, sizeof(*g)) {
		switch (mnl_attr_get_type(a)) {
		case NFULA_TIMESTAMP:
			if (mnl_attr_get_payload_len(a) == sizeof(struct nfulnl_msg_packet_timestamp)) {
				struct nfulnl_msg_packet_timestamp t;

				memcpy(&t, mnl_attr_get_payload(a), sizeof(t));
				r->ts_sec = (int64_t)be64toh(t.sec);
				r->ts_usec = (int64_t)be64toh(t.usec);
				r->have_ts = r->ts_sec > 0;
			}
			break;
		case NFULA_PACKET_HDR:
			if (mnl_attr_get_payload_len(a) >= sizeof(struct nfulnl_msg_packet_hdr)) {
				struct nfulnl_msg_packet_hdr h;

				memcpy(&h, mnl_attr_get_payload(a), sizeof(h));
				r->have_hook = true;
				r->hook = h.hook;
				r->hw_protocol = ntohs(h.hw_protocol);
			}
			break;
		case NFULA_IFINDEX_INDEV: r->indev = be32_attr(a); break;
		case NFULA_IFINDEX_OUTDEV: r->outdev = be32_attr(a); break;
		case NFULA_PREFIX:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
				r->prefix = mnl_attr_get_str(a);
			break;
		case NFULA_PAYLOAD:
			r->payload = mnl_attr_get_payload(a);
			r->len = mnl_attr_get_payload_len(a);
			break;
		}
	}
	if (r->payload)
		read_payload(r);
	return true;
}

/* ---- the socket ----------------------------------------------------------- */

/* One NFULNL_MSG_CONFIG request for `group`, acked. */
static int config(struct ng_nflog *l, uint16_t group, uint16_t attr, const void *data, size_t len,
		  struct ng_err *err)
{
	char buf[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct nfgenmsg *g;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	mnl_attr_put(nlh, attr, len, data);
	return ng_nl_request(&l->nl, nlh, NULL, NULL, err);
}

int ng_nflog_attach(struct ng_nflog *l, struct ng_nl *nl, struct ng_err *err)
{
	memset(l, 0, sizeof(*l));
	ng_nl_move(&l->nl, nl);
	l->buf = malloc(NG_NL_RECV_BUF);
	if (!l->buf) {
		ng_nflog_close(l);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

int ng_nflog_open(int netns_fd, struct ng_nflog *l, struct ng_err *err)
{
	struct ng_nl nl = {.fd = -1};

	memset(l, 0, sizeof(*l));
	l->nl.fd = -1;
	if (ng_nl_open_proto_netns(netns_fd, NETLINK_NETFILTER, 0, &nl, err) < 0)
		return -1;
	return ng_nflog_attach(l, &nl, err);
}

int ng_nflog_bind(struct ng_nflog *l, uint16_t group, uint32_t copy_range, struct ng_err *err)
{
	struct nfulnl_msg_config_cmd bind = {NFULNL_CFG_CMD_BIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(copy_range),
					      .copy_mode =
						      copy_range ? NFULNL_COPY_PACKET : NFULNL_COPY_META};
	uint32_t qthresh = htonl(1);
	struct ng_err e = {0};

	if (l->n_groups == NG_NFLOG_GROUPS)
		return ng_fail(err, NG_E_INTERNAL, "NFLOG: more than %d groups on one reader",
			       NG_NFLOG_GROUPS);
	if (config(l, group, NFULA_CFG_CMD, &bind, sizeof(bind), &e) < 0)
		goto fail;
	l->group[l->n_groups++] = group;
	if (config(l, group, NFULA_CFG_MODE, &mode, sizeof(mode), &e) < 0 ||
	    config(l, group, NFULA_CFG_QTHRESH, &qthresh, sizeof(qthresh), &e) < 0)
		goto fail;
	return 0;
fail:
	if (!l->nl.answer_errno)
		return ng_fail(err, NG_E_KERNEL, "cannot bind NFLOG group %u: %s", group, e.msg);
	/* The kernel answers EPERM when another socket holds the group. */
	return ng_fail(err, NG_E_KERNEL, "cannot bind NFLOG group %u: %s%s", group,
		       strerror(l->nl.answer_errno),
		       l->nl.answer_errno == EBUSY || l->nl.answer_errno == EPERM
			       ? " (another reader has it in this namespace?)"
			       : "");
}

int ng_nflog_read(struct ng_nflog *l, int timeout_ms, size_t max, ng_nflog_fn fn, void *data,
		  struct ng_err *err)
{
	size_t count = 0;

	for (int wait = timeout_ms; !max || count < max; wait = 0) {
		ssize_t n = ng_nl_recv(&l->nl, l->buf, NG_NL_RECV_BUF, wait);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)l->buf;
		size_t left = n > 0 ? (size_t)n : 0;

		if (n < 0 && errno == ENOBUFS) {
			l->lost++; /* the reader fell behind: counted, and on */
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0)
			return ng_fail(err, NG_E_KERNEL, "reading NFLOG: %s",
				       n == 0 ? "socket closed" : strerror(errno));
		for (; ng_nlmsg_ok(nlh, left); nlh = ng_nlmsg_next(nlh, &left)) {
			struct ng_nflog_record r;

			if (ng_nflog_parse(nlh, &r)) {
				fn(&r, data);
				count++;
			}
		}
	}
	return (int)count;
}

void ng_nflog_close(struct ng_nflog *l)
{
	struct nfulnl_msg_config_cmd unbind = {NFULNL_CFG_CMD_UNBIND};

	for (size_t i = 0; l->nl.ops && i < l->n_groups; i++)
		config(l, l->group[i], NFULA_CFG_CMD, &unbind, sizeof(unbind), NULL);
	l->n_groups = 0;
	ng_nl_close(&l->nl);
	l->nl.ops = NULL;
	free(l->buf);
	l->buf = NULL;
}
