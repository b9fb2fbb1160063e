#include "kernel/nfq.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/nlwalk.h"
#include "kernel/netns.h"
#include "kernel/nl.h"

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

/* Sends a config message and waits (briefly) for its ack. */
static int config(struct ng_nfq *q, struct nlmsghdr *nlh, struct ng_err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct pollfd p = {.fd = q->fd, .events = POLLIN};

	if (send(q->fd, nlh, nlh->nlmsg_len, 0) < 0)
		return ng_fail(err, NG_E_KERNEL, "NFQUEUE config: %s", strerror(errno));
	while (poll(&p, 1, 2000) > 0) {
		ssize_t n = ng_nl_recv_kernel(q->fd, buf, sizeof(buf));
		const struct nlmsghdr *r = (const struct nlmsghdr *)buf;
		size_t left = n > 0 ? (size_t)n : 0;

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		for (; ng_nlmsg_ok(r, left); r = ng_nlmsg_next(r, &left)) {
			const struct nlmsgerr *e;

			if (r->nlmsg_type != NLMSG_ERROR || r->nlmsg_seq != nlh->nlmsg_seq)
				continue;
			e = mnl_nlmsg_get_payload(r);
			if (e->error == 0)
				return 0;
			return ng_fail(err, NG_E_KERNEL, "binding NFQUEUE %u in the pod's namespace: %s%s",
				       q->num, strerror(-e->error),
				       e->error == -EPERM ? " (another process holds that queue there)" : "");
		}
	}
	return ng_fail(err, NG_E_KERNEL, "NFQUEUE config: no answer from the kernel");
}

struct open_ctx {
	struct ng_nfq *q;
	struct ng_err *err;
};

static int open_here(void *data)
{
	struct open_ctx *c = data;
	struct ng_nfq *q = c->q;
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int one = 1, rcv = NFQ_RCVBUF;
	struct nfqnl_msg_config_cmd cmd = {.command = NFQNL_CFG_CMD_BIND};
	struct nfqnl_msg_config_params params = {.copy_range = htonl(0xffff), .copy_mode = NFQNL_COPY_PACKET};
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};

	q->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_NETFILTER);
	if (q->fd < 0)
		return ng_fail(c->err, NG_E_KERNEL, "cannot open an NFQUEUE socket: %s", strerror(errno));
	if (bind(q->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ng_fail(c->err, NG_E_KERNEL, "cannot bind the NFQUEUE socket: %s", strerror(errno));
		goto fail;
	}
	/* Room for bursts; what does not fit is dropped by the kernel (the
	 * client retries), never passed unseen. */
	if (setsockopt(q->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		setsockopt(q->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	memset(buf, 0, sizeof(buf));
	nlh = nfq_hdr(buf, NFQNL_MSG_CONFIG, q->num, ++q->seq, NLM_F_ACK);
	mnl_attr_put(nlh, NFQA_CFG_CMD, sizeof(cmd), &cmd);
	if (config(q, nlh, c->err) < 0)
		goto fail;
	memset(buf, 0, sizeof(buf));
	nlh = nfq_hdr(buf, NFQNL_MSG_CONFIG, q->num, ++q->seq, NLM_F_ACK);
	mnl_attr_put(nlh, NFQA_CFG_PARAMS, sizeof(params), &params);
	if (config(q, nlh, c->err) < 0)
		goto fail;
	return 0;
fail:
	close(q->fd);
	q->fd = -1;
	return -1;
}

int ng_nfq_open_netns(int netns_fd, uint16_t num, struct ng_nfq *q, struct ng_err *err)
{
	struct open_ctx c = {q, err};

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->num = num;
	return ng_netns_run(netns_fd, open_here, &c, err);
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
