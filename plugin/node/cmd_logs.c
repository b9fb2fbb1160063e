#include "node/cmd_logs.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "base/cliarg.h"
#include "node/flowcli.h"
#include "node/target.h"
#include "policy/config.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boxxkite-netguard logs (--netns PATH | --pid PID) [--group N]\n"
		"         [--duration SECONDS] [--count PACKETS] [--state-dir DIR]\n"
		"\n"
		"Prints the packets a pod's tables refused, one JSON line each (time, pod,\n"
		"direction, table, category, verdict, protocol, addresses and ports, the\n"
		"rule's comment, and the NFLOG group and prefix), as the kernel logs them to\n"
		"the group of the plugin's config (log.nflogGroup, default %d) in the\n"
		"pod's namespace. Each table logs at most log.ratePerSecond: a \"skipped\"\n"
		"line says how many its limit held back (the counters of `stats` count every\n"
		"packet). With \"log\": false nothing is logged. The node-wide view, with\n"
		"history and the host side: `observe`.\n"
		"\n"
		"  --netns PATH        the pod's network namespace file\n"
		"  --pid PID           or any process in the pod\n"
		"  --group N           the config's log.nflogGroup (default: the pod's record's,\n"
		"                      else %d)\n"
		"  --duration SECONDS  stop after this long (default: until Ctrl-C)\n"
		"  --count PACKETS     stop after this many packets\n"
		"  --state-dir DIR     where the pods' records are (default %s)\n"
		"\n"
		"One reader per group and namespace: a second one is refused (the node agent\n"
		"reads every pod's group: ask it, `observe --pod NS/NAME`).\n"
		"Exit status: 0 stopped as asked, 1 cannot listen, 2 usage or no such\n"
		"namespace/process. Needs root.\n"
		"Example: boxxkite-netguard logs --pid 4242 --duration 10\n",
		NG_DEFAULT_LOG_GROUP, NG_DEFAULT_LOG_GROUP, NG_DEFAULT_STATE_DIR);
}

int ng_logs_main(int argc, char **argv)
{
	static const struct option opts[] = {
		NG_TARGET_OPTIONS,
		{"group", required_argument, NULL, 'g'},
		{"duration", required_argument, NULL, 'd'},
		{"count", required_argument, NULL, 'c'},
		{"state-dir", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ng_flowcli o = {.cmd = "boxxkite-netguard logs",
			       .state_dir = NG_DEFAULT_STATE_DIR,
			       .json = true,
			       .follow = true,
			       .legacy = true,
			       .netns_fd = -1,
			       .group = -1};
	struct ng_target t = {.cmd = "logs"};
	char path[4096];
	long n = 0;
	int c, rc;

	optind = 1;
	while ((c = ng_target_getopt(&t, argc, argv, opts)) != -1) {
		switch (c) {
		case NG_TARGET_BAD: return 2;
		case 'g':
			if (!ng_arg_long("logs", "group", optarg, 0, 65535, &n))
				return 2;
			o.group = (int)n;
			break;
		case 'd':
			if (!ng_arg_double("logs", "duration", optarg, 0, 1e9, &o.duration))
				return 2;
			break;
		case 'c':
			if (!ng_arg_long("logs", "count", optarg, 0, 0x7fffffff, &o.count))
				return 2;
			break;
		case 'S': o.state_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	o.netns_fd = ng_target_open(&t, path, sizeof(path));
	if (o.netns_fd < 0)
		return 2;
	rc = ng_flowcli_direct(&o);
	close(o.netns_fd);
	return rc;
}
