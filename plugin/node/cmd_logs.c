#include "node/cmd_logs.h"
#include "base/clock.h"

#include <getopt.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/addr.h"
#include "base/cliarg.h"
#include "base/decision_log.h"
#include "kernel/nflog.h"
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

/* One JSON line per logged packet. */
static void print_record(const struct ng_nflog_record *r, void *data)
{
	struct logs *lg = data;
	char ts[64], s[NG_IP_STRLEN], d[NG_IP_STRLEN];
	json_t *o;

	if (lg->count && lg->seen >= lg->count)
		return; /* --count reached inside one read */
	o = json_object();
	/* When the packet was logged, if the kernel says; else when it arrived. */
	if (!r->have_ts || ng_utc_format((time_t)r->ts_sec, (long)(r->ts_usec / 1000), ts, sizeof(ts)) <= 0)
		ng_utc_now(ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "group", json_integer(r->group));
	if (r->prefix)
		json_object_set_new(o, "prefix", json_string(r->prefix));
	if (r->src.fam) {
		ng_ip_format(&r->src, s, sizeof(s));
		ng_ip_format(&r->dst, d, sizeof(d));
		json_object_set_new(o, "src", json_string(s));
		json_object_set_new(o, "dst", json_string(d));
		json_object_set_new(o, "proto",
				    r->proto == IPPROTO_TCP   ? json_string("tcp")
				    : r->proto == IPPROTO_UDP ? json_string("udp")
							      : json_integer(r->proto));
	}
	if (r->have_ports) {
		json_object_set_new(o, "sport", json_integer(r->sport));
		json_object_set_new(o, "dport", json_integer(r->dport));
	}
	json_dumpf(o, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(o);
	lg->seen++;
}

/* Binds the group in the pod's namespace, prints packets until done. */
static int listen_pod(int netns_fd, struct logs *lg)
{
	struct ng_nflog l;
	struct ng_err err = {0};
	double end = lg->duration > 0 ? now_s() + lg->duration : 0;

	if (ng_nflog_open(netns_fd, &l, &err) < 0) {
		fprintf(stderr, "boxxkite-netguard logs: %s\n", err.msg);
		return 1;
	}
	if (ng_nflog_bind(&l, (uint16_t)lg->group, COPY_RANGE, &err) < 0) {
		fprintf(stderr, "boxxkite-netguard logs: %s\n", err.msg);
		ng_nflog_close(&l);
		return 1;
	}
	while (!stop && (!lg->count || lg->seen < lg->count)) {
		int wait = end ? (int)((end - now_s()) * 1000) : 1000;
		unsigned long lost = l.lost;

		if (end && wait <= 0)
			break;
		if (ng_nflog_read(&l, wait > 1000 ? 1000 : wait,
				  lg->count ? (size_t)(lg->count - lg->seen) : 0, print_record, lg, &err) < 0)
			break;
		if (l.lost != lost) /* the reader fell behind: say so, go on */
			fprintf(stderr, "boxxkite-netguard logs: some log messages were lost (ENOBUFS)\n");
	}
	ng_nflog_close(&l);
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
	lg.status = listen_pod(fd, &lg);
	close(fd);
	return lg.status;
}
