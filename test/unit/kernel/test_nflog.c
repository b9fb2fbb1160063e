/* kernel/nflog.c: the NFLOG reader against the fake socket. Binding a
 * group is three acked config requests (bind, copy mode and range, one
 * message per packet); a group another reader holds is refused, saying
 * so; logged packets are read with their prefix, addresses, ports,
 * interfaces and time; a forged "log record" from another port id is never
 * handed out; an overrun is counted. */
#include "fake_kernel.h"

#include <arpa/inet.h>
#include <endian.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>

#include "kernel/nflog.h"

#define CONFIG_TYPE ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG)

struct world {
	int bind_errno; /* NFULNL_CFG_CMD_BIND answered with this */
	struct fsock sock;
	struct ng_nflog l;
	struct ng_nflog_record got[8];
	char prefix[8][64];
	int n;
};

static void answer(struct fsock *s, const struct nlmsghdr *req)
{
	struct world *w = s->world;
	const struct nlattr *a;
	int error = 0;

	mnl_attr_for_each(a, req, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == NFULA_CFG_CMD &&
		    ((const struct nfulnl_msg_config_cmd *)mnl_attr_get_payload(a))->command ==
			    NFULNL_CFG_CMD_BIND)
			error = w->bind_errno;
	}
	fs_dgram(s, 0);
	fs_ack(s, req->nlmsg_seq, error);
}

static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));
	struct ng_nl nl;
	struct ng_err err = {0};

	assert_non_null(w);
	w->sock.answer = answer;
	w->sock.world = w;
	ng_nl_init_ops(&nl, &fs_ops, &w->sock);
	assert_int_equal(ng_nflog_attach(&w->l, &nl, &err), 0);
	return w;
}

static void on_record(const struct ng_nflog_record *r, void *data)
{
	struct world *w = data;

	assert_true(w->n < 8);
	w->got[w->n] = *r;
	snprintf(w->prefix[w->n], sizeof(w->prefix[0]), "%s", r->prefix ? r->prefix : "(none)");
	w->n++;
}

/* A log record as nfnetlink_log sends it (attributes in its order). */
static void put_record(struct fsock *s, uint8_t family, uint16_t group, const char *prefix,
		       const uint8_t *pkt, size_t len, int64_t sec)
{
	struct nlmsghdr *nlh = fs_msg(s, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET, 0, 0);
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nfulnl_msg_packet_hdr ph = {.hw_protocol = htons(family == NFPROTO_IPV4 ? 0x0800 : 0x86dd)};
	struct nfulnl_msg_packet_timestamp ts = {.sec = htobe64((uint64_t)sec), .usec = htobe64(250000)};

	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	mnl_attr_put(nlh, NFULA_PACKET_HDR, sizeof(ph), &ph);
	if (prefix)
		mnl_attr_put_strz(nlh, NFULA_PREFIX, prefix);
	mnl_attr_put_u32(nlh, NFULA_IFINDEX_OUTDEV, htonl(3));
	if (sec)
		mnl_attr_put(nlh, NFULA_TIMESTAMP, sizeof(ts), &ts);
	mnl_attr_put(nlh, NFULA_PAYLOAD, len, pkt);
	fs_end(s, nlh);
}

/* IPv4 TCP 10.244.1.5:40443 -> 192.0.2.1:443 (the headers only). */
static const uint8_t TCP4[40] = {0x45, 0,   0, 40, 0,   0, 0x40, 0, 64,   IPPROTO_TCP, 0,    0,
				 10,   244, 1, 5,  192, 0, 2,    1, 0x9d, 0xfb,        0x01, 0xbb};

static void test_bind(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	const struct nlattr *a;
	int cmd = -1, range = -1, mode = -1, qthresh = -1;

	assert_int_equal(ng_nflog_bind(&w->l, 42, 128, &err), 0);
	assert_int_equal(w->sock.nreq, 3);
	for (int k = 0; k < 3; k++) {
		const struct nlmsghdr *req = fs_req(&w->sock, k);
		const struct nfgenmsg *g = mnl_nlmsg_get_payload(req);

		assert_int_equal(req->nlmsg_type, CONFIG_TYPE);
		assert_true(req->nlmsg_flags & NLM_F_ACK);
		assert_int_equal(ntohs(g->res_id), 42);
		mnl_attr_for_each(a, req, sizeof(*g)) {
			const void *p = mnl_attr_get_payload(a);

			if (mnl_attr_get_type(a) == NFULA_CFG_CMD)
				cmd = ((const struct nfulnl_msg_config_cmd *)p)->command;
			if (mnl_attr_get_type(a) == NFULA_CFG_MODE) {
				range = (int)ntohl(((const struct nfulnl_msg_config_mode *)p)->copy_range);
				mode = ((const struct nfulnl_msg_config_mode *)p)->copy_mode;
			}
			if (mnl_attr_get_type(a) == NFULA_CFG_QTHRESH)
				qthresh = (int)ntohl(mnl_attr_get_u32(a));
		}
	}
	assert_int_equal(cmd, NFULNL_CFG_CMD_BIND);
	assert_int_equal(range, 128);
	assert_int_equal(mode, NFULNL_COPY_PACKET);
	assert_int_equal(qthresh, 1); /* one message per packet */
	/* Closing unbinds it. */
	ng_nflog_close(&w->l);
	assert_int_equal(w->sock.nreq, 4);
	mnl_attr_for_each(a, fs_req(&w->sock, 3), sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == NFULA_CFG_CMD)
			cmd = ((const struct nfulnl_msg_config_cmd *)mnl_attr_get_payload(a))->command;
	}
	assert_int_equal(cmd, NFULNL_CFG_CMD_UNBIND);
	free(w);
}

static void test_bind_refused(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};

	/* The kernel answers EPERM when another socket holds the group. */
	w->bind_errno = EPERM;
	assert_int_equal(ng_nflog_bind(&w->l, 42, 128, &err), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg,
			"cannot bind NFLOG group 42: Operation not permitted (another reader has it");
	assert_int_equal(w->sock.nreq, 1); /* nothing configured after the refusal */
	ng_nflog_close(&w->l);
	assert_int_equal(w->sock.nreq, 1); /* and nothing to unbind */
	free(w);
}

static void test_read_records(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	uint8_t udp6[48] = {0x60, 0, 0, 0, 0, 8, IPPROTO_UDP, 64};
	struct ng_ip want;

	udp6[8] = 0xfd; /* fd00::5 -> fd00::35, 5353 -> 53 */
	udp6[23] = 5;
	udp6[24] = 0xfd;
	udp6[39] = 0x35;
	udp6[40] = 0x14;
	udp6[41] = 0xe9;
	udp6[43] = 53;
	/* A forger's record first (from port 4242), then two of the kernel's
	 * in one datagram, then one whose payload is too short for addresses. */
	fs_dgram(&w->sock, FS_FORGER);
	put_record(&w->sock, NFPROTO_IPV4, 42, "forged", TCP4, sizeof(TCP4), 1);
	fs_dgram(&w->sock, 0);
	put_record(&w->sock, NFPROTO_IPV4, 42, "netguard egress sandboxes/a: ", TCP4, sizeof(TCP4),
		   1700000000);
	put_record(&w->sock, NFPROTO_IPV6, 42, NULL, udp6, sizeof(udp6), 0);
	fs_dgram(&w->sock, 0);
	put_record(&w->sock, NFPROTO_IPV4, 42, "short", TCP4, 12, 0);
	assert_int_equal(ng_nflog_read(&w->l, 0, 0, on_record, w, &err), 3);
	assert_int_equal(w->n, 3);

	assert_int_equal(w->got[0].group, 42);
	assert_string_equal(w->prefix[0], "netguard egress sandboxes/a: ");
	assert_int_equal(ng_ip_parse("10.244.1.5", &want), 0);
	assert_true(ng_ip_eq(&w->got[0].src, &want));
	assert_int_equal(ng_ip_parse("192.0.2.1", &want), 0);
	assert_true(ng_ip_eq(&w->got[0].dst, &want));
	assert_int_equal(w->got[0].proto, IPPROTO_TCP);
	assert_true(w->got[0].have_ports);
	assert_int_equal(w->got[0].sport, 40443);
	assert_int_equal(w->got[0].dport, 443);
	assert_int_equal(w->got[0].outdev, 3);
	assert_int_equal(w->got[0].indev, 0);
	assert_true(w->got[0].have_ts);
	assert_int_equal(w->got[0].ts_sec, 1700000000);
	assert_int_equal(w->got[0].ts_usec, 250000);

	assert_string_equal(w->prefix[1], "(none)");
	assert_false(w->got[1].have_ts);
	assert_int_equal(ng_ip_parse("fd00::35", &want), 0);
	assert_true(ng_ip_eq(&w->got[1].dst, &want));
	assert_int_equal(w->got[1].proto, IPPROTO_UDP);
	assert_int_equal(w->got[1].sport, 5353);
	assert_int_equal(w->got[1].dport, 53);

	assert_string_equal(w->prefix[2], "short");
	assert_int_equal(w->got[2].src.fam, 0);
	assert_false(w->got[2].have_ports);
	/* Nothing more: 0, not an error. */
	assert_int_equal(ng_nflog_read(&w->l, 0, 0, on_record, w, &err), 0);
	ng_nflog_close(&w->l);
	free(w);
}

/* A netdev table's record: its hook and the frame's protocol in the
 * packet header; no family of the packet's own. */
static void put_netdev(struct fsock *s, uint8_t hook, uint16_t hw_proto, const uint8_t *pkt, size_t len)
{
	struct nlmsghdr *nlh = fs_msg(s, (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET, 0, 0);
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nfulnl_msg_packet_hdr ph = {.hw_protocol = htons(hw_proto), .hook = hook};

	g->nfgen_family = NFPROTO_NETDEV;
	g->version = NFNETLINK_V0;
	g->res_id = htons(42);
	mnl_attr_put(nlh, NFULA_PACKET_HDR, sizeof(ph), &ph);
	mnl_attr_put_strz(nlh, NFULA_PREFIX, "netguard raw sandboxes/a: ");
	mnl_attr_put_u32(nlh, hook == NF_NETDEV_EGRESS ? NFULA_IFINDEX_OUTDEV : NFULA_IFINDEX_INDEV,
			 htonl(3));
	mnl_attr_put(nlh, NFULA_PAYLOAD, len, pkt);
	fs_end(s, nlh);
}

/* The guard logs on egress, from the Ethernet header; the host side on
 * ingress, from the IP header; a frame that is not IP has its type and no
 * addresses; a short one nothing. */
static void test_netdev_records(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	uint8_t frame[14 + sizeof(TCP4)] = {[12] = 0x08, [13] = 0x00}, vlan[60] = {[12] = 0x81, [13] = 0x00};
	struct ng_ip want;

	memcpy(frame + 14, TCP4, sizeof(TCP4));
	fs_dgram(&w->sock, 0);
	put_netdev(&w->sock, NF_NETDEV_EGRESS, 0x0800, frame, sizeof(frame));
	put_netdev(&w->sock, NF_NETDEV_INGRESS, 0x0800, TCP4, sizeof(TCP4));
	put_netdev(&w->sock, NF_NETDEV_EGRESS, 0x8100, vlan, sizeof(vlan));
	put_netdev(&w->sock, NF_NETDEV_EGRESS, 0x0800, frame, 10);
	/* IPv4 bytes that say IPv6: no addresses from a frame that lies. */
	put_netdev(&w->sock, NF_NETDEV_INGRESS, 0x86dd, TCP4, sizeof(TCP4));
	assert_int_equal(ng_nflog_read(&w->l, 0, 0, on_record, w, &err), 5);
	assert_int_equal(ng_ip_parse("192.0.2.1", &want), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(w->got[i].family, NFPROTO_NETDEV);
		assert_true(w->got[i].have_hook);
		assert_int_equal(w->got[i].ethertype, 0x0800);
		assert_true(ng_ip_eq(&w->got[i].dst, &want));
		assert_int_equal(w->got[i].dport, 443);
	}
	assert_int_equal(w->got[0].hook, NF_NETDEV_EGRESS);
	assert_int_equal(w->got[1].hook, NF_NETDEV_INGRESS);
	assert_int_equal(w->got[1].indev, 3);
	assert_int_equal(w->got[2].ethertype, 0x8100);
	assert_int_equal(w->got[2].src.fam, 0);
	assert_int_equal(w->got[3].ethertype, 0);
	assert_int_equal(w->got[3].src.fam, 0);
	assert_int_equal(w->got[4].ethertype, 0x86dd);
	assert_int_equal(w->got[4].src.fam, 0);
	ng_nflog_close(&w->l);
	free(w);
}

static void test_read_bounded_and_lost(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};

	for (int i = 0; i < 3; i++) {
		fs_dgram(&w->sock, 0);
		put_record(&w->sock, NFPROTO_IPV4, 7, "p", TCP4, sizeof(TCP4), 0);
	}
	/* At most 2: the third stays queued for the next read. */
	assert_int_equal(ng_nflog_read(&w->l, 0, 2, on_record, w, &err), 2);
	assert_int_equal(w->sock.qtail - w->sock.qhead, 1);
	/* An overrun is counted, and reading goes on. */
	w->sock.recv_errno = ENOBUFS;
	assert_int_equal(ng_nflog_read(&w->l, 0, 0, on_record, w, &err), 1);
	assert_int_equal(w->l.lost, 1);
	assert_int_equal(w->n, 3);
	/* A socket error is one. */
	w->sock.recv_errno = EBADF;
	assert_int_equal(ng_nflog_read(&w->l, 0, 0, on_record, w, &err), -1);
	assert_contains(err.msg, "reading NFLOG");
	ng_nflog_close(&w->l);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind),           cmocka_unit_test(test_bind_refused),
		cmocka_unit_test(test_read_records),   cmocka_unit_test(test_read_bounded_and_lost),
		cmocka_unit_test(test_netdev_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
