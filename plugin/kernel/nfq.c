#include "kernel/nfq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/nlwalk.h"
#include "kernel/nl.h"
#include "kernel/nl_netns.h"

#define NFQ_RCVBUF (4 * 1024 * 1024)

static struct nlmsghdr *nfq_hdr(char *buf, uint16_t type, uint16_t num, uint32_t seq, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;

	nlh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(num);
	return nlh;
}

/* One config message, acked. */
static int config(struct ng_nl *nl, uint16_t num, uint16_t attr, const void *data, size_t len,
		  struct ng_err *err)
{
	char buf[256] __attribute__((aligned(4)));
	struct nlmsghdr *nlh;
	struct ng_err e = {0};

	memset(buf, 0, sizeof(buf));
	nlh = nfq_hdr(buf, NFQNL_MSG_CONFIG, num, 0, 0);
	mnl_attr_put(nlh, attr, len, data);
	if (ng_nl_request(nl, nlh, NULL, NULL, &e) == 0)
		return 0;
	if (!nl->answer_errno)
		return ng_fail(err, NG_E_KERNEL, "NFQUEUE config: %s", e.msg);
	return ng_fail(err, NG_E_KERNEL, "binding NFQUEUE %u in the pod's namespace: %s%s", num,
		       strerror(nl->answer_errno),
		       nl->answer_errno == EPERM ? " (another process holds that queue there)" : "");
}

int ng_nfq_open_netns(int netns_fd, uint16_t num, struct ng_nfq *q, struct ng_err *err)
{
	struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND};
	struct nfqnl_msg_config_params params = {.copy_range = htonl(0xffff), .copy_mode = NFQNL_COPY_PACKET};
	struct ng_nl nl = {.fd = -1};
	int one = 1;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->num = num;
	if (ng_nl_open_proto_netns(netns_fd, NETLINK_NETFILTER, 0, &nl, err) < 0)
		return -1;
	/* Room for bursts; what does not fit is dropped by the kernel (the
	 * client retries), never passed unseen. */
	ng_nl_rcvbuf(&nl, NFQ_RCVBUF);
	setsockopt(nl.fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	if (config(&nl, num, NFQA_CFG_CMD, &cmd, sizeof(cmd), err) < 0 ||
	    config(&nl, num, NFQA_CFG_PARAMS, &params, sizeof(params), err) < 0) {
		ng_nl_close(&nl);
		return -1;
	}
	/* Handed over: from here the queue is read and answered on the bare
	 * socket, from the agent's poll loop (ng_nfq_read, ng_nfq_verdict). */
	q->fd = nl.fd;
	q->seq = nl.seq;
	return 0;
}

void ng_nfq_close(struct ng_nfq *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

static void one_packet(const struct nlmsghdr *nlh, ng_nfq_fn fn, void *data)
{
	struct ng_nfq_packet p = {0};
	const struct nlattr *a;
	bool have_hdr = false;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		switch (mnl_attr_get_type(a)) {
		case NFQA_PACKET_HDR:
			if (mnl_attr_get_payload_len(a) >= sizeof(struct nfqnl_msg_packet_hdr)) {
				const struct nfqnl_msg_packet_hdr *h = mnl_attr_get_payload(a);

				p.id = ntohl(h->packet_id);
				p.hw_protocol = ntohs(h->hw_protocol);
				p.hook = h->hook;
				have_hdr = true;
			}
			break;
		case NFQA_IFINDEX_INDEV:
			if (mnl_attr_get_payload_len(a) >= sizeof(uint32_t))
				p.indev = ntohl(mnl_attr_get_u32(a));
			break;
		case NFQA_IFINDEX_OUTDEV:
			if (mnl_attr_get_payload_len(a) >= sizeof(uint32_t))
				p.outdev = ntohl(mnl_attr_get_u32(a));
			break;
		case NFQA_PAYLOAD:
			p.data = mnl_attr_get_payload(a);
			p.len = mnl_attr_get_payload_len(a);
			break;
		}
	}
	if (have_hdr)
		fn(&p, data);
}

int ng_nfq_read(struct ng_nfq *q, uint8_t *buf, size_t len, int max, ng_nfq_fn fn, void *data)
{
	int count = 0;

	for (int reads = 0; reads < max; reads++) {
		ssize_t n = ng_nl_recv_kernel(q->fd, buf, len);
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf;
		size_t left = n > 0 ? (size_t)n : 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == ENOBUFS)
				return count;
			return -1;
		}
		if (n == 0)
			return count;
		for (; ng_nlmsg_ok(nlh, left); nlh = ng_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_type == ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)) {
				one_packet(nlh, fn, data);
				count++;
			}
		}
	}
	return count;
}

int ng_nfq_verdict(struct ng_nfq *q, uint32_t id, uint32_t verdict)
{
	char buf[128];
	struct nlmsghdr *nlh;
	struct nfqnl_msg_verdict_hdr v = {.verdict = htonl(verdict), .id = htonl(id)};

	memset(buf, 0, sizeof(buf));
	nlh = nfq_hdr(buf, NFQNL_MSG_VERDICT, q->num, ++q->seq, 0);
	mnl_attr_put(nlh, NFQA_VERDICT_HDR, sizeof(v), &v);
	return send(q->fd, nlh, nlh->nlmsg_len, 0) < 0 ? -1 : 0;
}
