#include "node/cmd_logs.h"
#include "base/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <time.h>
#include <unistd.h>

#include "base/addr.h"
#include "base/cliarg.h"
#include "base/decision_log.h"
#include "kernel/netns.h"
#include "node/target.h"

#define COPY_RANGE 128 /* enough for the IP and transport headers */

struct logs {
	unsigned group;
	double duration; /* seconds, 0: until interrupted */
	long count;      /* packets, 0: unlimited */
	long seen;
	int status;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	return (double)ng_mono_us() / 1e6;
}

/* One NFULNL_MSG_CONFIG request, acked. */
static int config(struct mnl_socket *nl, unsigned group, uint16_t attr, const void *data, size_t len)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, sizeof(buf)));
	struct nfgenmsg *g;
	int ret;

	nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons((uint16_t)group);
	mnl_attr_put(nlh, attr, len, data);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (ret < 0)
		return -1;
	return mnl_cb_run(buf, (size_t)ret, nlh->nlmsg_seq, mnl_socket_get_portid(nl), NULL, NULL) < 0 ? -1
												       : 0;
}

/* Addresses, protocol and ports out of the logged bytes (the network
 * header onwards). */
static void describe(json_t *o, int family, const uint8_t *p, size_t len)
{
	struct ng_ip src = {0}, dst = {0};
	char s[NG_IP_STRLEN], d[NG_IP_STRLEN];
	size_t l4 = 0;
	uint8_t proto = 0;

	if (family == AF_INET && len >= 20) {
		src.fam = dst.fam = NG_V4;
		memcpy(src.a, p + 12, 4);
		memcpy(dst.a, p + 16, 4);
		proto = p[9];
		l4 = (size_t)(p[0] & 0x0f) * 4;
	} else if (family == AF_INET6 && len >= 40) {
		src.fam = dst.fam = NG_V6;
		memcpy(src.a, p + 8, 16);
		memcpy(dst.a, p + 24, 16);
		proto = p[6]; /* the first next-header; extension headers not followed */
		l4 = 40;
	} else {
		return;
	}
	ng_ip_format(&src, s, sizeof(s));
	ng_ip_format(&dst, d, sizeof(d));
	json_object_set_new(o, "src", json_string(s));
	json_object_set_new(o, "dst", json_string(d));
	json_object_set_new(o, "proto",
			    proto == IPPROTO_TCP   ? json_string("tcp")
			    : proto == IPPROTO_UDP ? json_string("udp")
						   : json_integer(proto));
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && len >= l4 + 4) {
		json_object_set_new(o, "sport", json_integer(p[l4] << 8 | p[l4 + 1]));
		json_object_set_new(o, "dport", json_integer(p[l4 + 2] << 8 | p[l4 + 3]));
	}
}

static int packet_cb(const struct nlmsghdr *nlh, void *data)
{
	struct logs *lg = data;
	const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	char ts[64];
	json_t *o;

	if ((nlh->nlmsg_type & 0xff) != NFULNL_MSG_PACKET)
		return MNL_CB_OK;
	o = json_object();
	/* When the packet was logged, if the kernel says; else when it arrived. */
	ng_utc_now(ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "group", json_integer(ntohs(g->res_id)));
	mnl_attr_for_each(attr, nlh, sizeof(*g)) {
		switch (mnl_attr_get_type(attr)) {
		case NFULA_TIMESTAMP:
			if (mnl_attr_get_payload_len(attr) == sizeof(struct nfulnl_msg_packet_timestamp)) {
				const struct nfulnl_msg_packet_timestamp *t = mnl_attr_get_payload(attr);
				time_t sec = (time_t)be64toh(t->sec);

				if (sec > 0 &&
				    ng_utc_format(sec, (long)be64toh(t->usec) / 1000, ts, sizeof(ts)) > 0)
					json_object_set_new(o, "ts", json_string(ts));
			}
			break;
		case NFULA_PREFIX:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
				json_object_set_new(o, "prefix", json_string(mnl_attr_get_str(attr)));
			break;
		case NFULA_PAYLOAD:
			describe(o, g->nfgen_family, mnl_attr_get_payload(attr),
				 mnl_attr_get_payload_len(attr));
			break;
		}
	}
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(o);
	lg->seen++;
	return MNL_CB_OK;
}

/* Inside the pod: bind the group, print packets until done, unbind. */
static int listen_inside(void *data)
{
	struct logs *lg = data;
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	struct nfulnl_msg_config_cmd bind = {NFULNL_CFG_CMD_BIND}, unbind = {NFULNL_CFG_CMD_UNBIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(COPY_RANGE),
					      .copy_mode = NFULNL_COPY_PACKET};
	/* One message per packet: by default the kernel batches them for up to
	 * a second, and what it still holds when we unbind is lost. */
	uint32_t qthresh = htonl(1);
	double end = lg->duration > 0 ? now_s() + lg->duration : 0;
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE * 8);

	if (!nl || !buf || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "boxxkite-netguard logs: cannot open a netfilter socket: %s\n",
			strerror(errno));
		lg->status = 1;
		goto out;
	}
	if (config(nl, lg->group, NFULA_CFG_CMD, &bind, sizeof(bind)) < 0 ||
	    config(nl, lg->group, NFULA_CFG_MODE, &mode, sizeof(mode)) < 0 ||
	    config(nl, lg->group, NFULA_CFG_QTHRESH, &qthresh, sizeof(qthresh)) < 0) {
		fprintf(stderr, "boxxkite-netguard logs: cannot bind NFLOG group %u: %s%s\n", lg->group,
			strerror(errno),
			/* The kernel answers EPERM when another socket holds the group. */
			errno == EBUSY || errno == EPERM ? " (another reader has it in this namespace?)"
							 : "");
		lg->status = 1;
		goto out;
	}
	while (!stop && (!lg->count || lg->seen < lg->count)) {
		struct pollfd p = {.fd = mnl_socket_get_fd(nl), .events = POLLIN};
		int wait = end ? (int)((end - now_s()) * 1000) : 1000, ret;

		if (end && wait <= 0)
			break;
		if (poll(&p, 1, wait > 1000 ? 1000 : wait) <= 0)
			continue;
		ret = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE * 8);
		if (ret < 0) {
			if (errno == ENOBUFS) { /* the reader fell behind: say so, go on */
				fprintf(stderr,
					"boxxkite-netguard logs: some log messages were lost (ENOBUFS)\n");
				continue;
			}
			break;
		}
		mnl_cb_run(buf, (size_t)ret, 0, 0, packet_cb, lg);
	}
	config(nl, lg->group, NFULA_CFG_CMD, &unbind, sizeof(unbind));
out:
	free(buf);
	if (nl)
		mnl_socket_close(nl);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: boxxkite-netguard logs (--netns PATH | --pid PID) --group N\n"
		   "         [--duration SECONDS] [--count PACKETS]\n"
		   "\n"
		   "Prints the packets a pod's table denied, one JSON line each (time,\n"
		   "category, pod, protocol, addresses and ports), as the kernel logs them\n"
		   "to the NFLOG group of the plugin's config (log.nflogGroup; logged\n"
		   "packets are rate-limited by log.ratePerSecond, the counters of `stats`\n"
		   "count every packet). Without log.nflogGroup nothing is logged.\n"
		   "\n"
		   "  --netns PATH        the pod's network namespace file\n"
		   "  --pid PID           or any process in the pod\n"
		   "  --group N           the config's log.nflogGroup (required)\n"
		   "  --duration SECONDS  stop after this long (default: until Ctrl-C)\n"
		   "  --count PACKETS     stop after this many packets\n"
		   "\n"
		   "One reader per group and namespace: a second one is refused.\n"
		   "Exit status: 0 stopped as asked, 1 cannot listen, 2 usage or no such\n"
		   "namespace/process. Needs root.\n"
		   "Example: boxxkite-netguard logs --pid 4242 --group 42 --duration 10\n");
}

int ng_logs_main(int argc, char **argv)
{
	static const struct option opts[] = {
		NG_TARGET_OPTIONS,
		{"group", required_argument, NULL, 'g'},
		{"duration", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct logs lg = {0};
	struct ng_err err = {0};
	struct ng_target t = {.cmd = "logs"};
	bool have_group = false;
	char path[4096];
	long n = 0;
	int c, fd;

	optind = 1;
	while ((c = ng_target_getopt(&t, argc, argv, opts)) != -1) {
		switch (c) {
		case NG_TARGET_BAD: return 2;
		case 'g':
			if (!ng_arg_long("logs", "group", optarg, 0, 65535, &n))
				return 2;
			lg.group = (unsigned)n;
			have_group = true;
			break;
		case 'd':
			if (!ng_arg_double("logs", "duration", optarg, 0, 1e9, &lg.duration))
				return 2;
			break;
		case 'c':
			if (!ng_arg_long("logs", "count", optarg, 0, 0x7fffffff, &lg.count))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!have_group) {
		fprintf(stderr,
			"boxxkite-netguard logs: --group N (the config's log.nflogGroup) is required\n");
		return 2;
	}
	fd = ng_target_open(&t, path, sizeof(path));
	if (fd < 0)
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (ng_netns_run(fd, listen_inside, &lg, &err) < 0) {
		fprintf(stderr, "boxxkite-netguard logs: %s\n", err.msg);
		lg.status = 1;
	}
	close(fd);
	return lg.status;
}
