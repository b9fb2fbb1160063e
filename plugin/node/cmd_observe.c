#include "node/cmd_observe.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "base/cliarg.h"
#include "base/clock.h"
#include "node/flowcli.h"
#include "node/target.h"
#include "policy/config.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boxxkite-netguard observe [--pod NS/NAME] [--category C] [--json]\n"
		"         [--since DURATION] [--follow] [--count N] [--duration SECONDS]\n"
		"         [--state-dir DIR] [--netns PATH | --pid PID] [--group N]\n"
		"\n"
		"Every refusal on this node, one line per packet: time, pod, direction, which\n"
		"table refused it (pod: its own table; guard: its packet-socket guard; node:\n"
		"its host-side table), category (metadata, egress, ingress, source, raw,\n"
		"host, dns-refused), REFUSED or WOULD_DENY (an audited pod's table let it\n"
		"through), protocol, source and destination, and the comment of the rule.\n"
		"Each table logs at most log.ratePerSecond (burst log.burst): a line says how\n"
		"many refusals its limit held back (\"skipped\"); a reader that falls behind\n"
		"is told what it missed (\"dropped\").\n"
		"\n"
		"  --pod NS/NAME       only this pod's\n"
		"  --category C        only this category (or would_deny: every would_deny)\n"
		"  --json              one JSON object per line (README \"observe\")\n"
		"  --since DURATION    from the agent's history: the last 30s, 5m, 2h (it keeps\n"
		"                      the node's last 4096 events); without --since and\n"
		"                      --follow: all it keeps\n"
		"  --follow            then every new one, until Ctrl-C\n"
		"  --count N           stop after N refusals\n"
		"  --duration SECONDS  stop after this long\n"
		"  --state-dir DIR     the plugin's stateDir (default %s): the agent's\n"
		"                      socket (agent.sock) and the pods' records\n"
		"\n"
		"Node-wide through the node agent. Without one, --pod NS/NAME --follow listens\n"
		"in that pod's own namespace (its record says where; its host-side table's\n"
		"lines come from the node's namespace), as does --netns PATH or --pid PID\n"
		"(--group N: its log.nflogGroup when no record says; default %d).\n"
		"On a cluster: kubectl exec -n NS AGENT-POD -c agent -- boxxkite-netguard\n"
		"observe --follow\n"
		"Exit status: 0 done, 1 cannot read (or the agent ended a --follow stream:\n"
		"it stopped), 2 usage (or no agent and no pod given).\n"
		"Needs root.\n",
		NG_DEFAULT_STATE_DIR, NG_DEFAULT_LOG_GROUP);
}

int ng_observe_main(int argc, char **argv)
{
	static const struct option opts[] = {
		NG_TARGET_OPTIONS,
		{"pod", required_argument, NULL, 'P'},
		{"category", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"since", required_argument, NULL, 's'},
		{"follow", no_argument, NULL, 'f'},
		{"count", required_argument, NULL, 'C'},
		{"duration", required_argument, NULL, 'd'},
		{"state-dir", required_argument, NULL, 'S'},
		{"group", required_argument, NULL, 'g'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct ng_flowcli o = {.cmd = "boxxkite-netguard observe",
			       .state_dir = NG_DEFAULT_STATE_DIR,
			       .netns_fd = -1,
			       .group = -1};
	struct ng_target t = {.cmd = "observe"};
	struct ng_err err = {0};
	bool since = false;
	char path[4096];
	long n;
	int c, rc;

	optind = 1;
	opterr = 1;
	while ((c = ng_target_getopt(&t, argc, argv, opts)) != -1) {
		switch (c) {
		case NG_TARGET_BAD: return 2;
		case 'P':
			if (ng_flow_filter_pod(&o.filter, optarg, &err) < 0) {
				fprintf(stderr, "%s: %s\n", o.cmd, err.msg);
				return 2;
			}
			break;
		case 'c':
			if (ng_flow_filter_category(&o.filter, optarg, &err) < 0) {
				fprintf(stderr, "%s: %s\n", o.cmd, err.msg);
				return 2;
			}
			break;
		case 'j': o.json = true; break;
		case 's': {
			int64_t ms = ng_duration_ms(optarg);

			if (ms < 0) {
				fprintf(stderr,
					"%s: --since: want a duration such as 30s, 5m, 2h; got \"%s\"\n",
					o.cmd, optarg);
				return 2;
			}
			o.filter.since_ms = ng_wall_ms() - ms;
			since = true;
			break;
		}
		case 'f': o.follow = true; break;
		case 'C':
			if (!ng_arg_long("observe", "count", optarg, 1, 0x7fffffff, &o.count))
				return 2;
			break;
		case 'd':
			if (!ng_arg_double("observe", "duration", optarg, 0, 1e9, &o.duration))
				return 2;
			break;
		case 'S': o.state_dir = optarg; break;
		case 'g':
			if (!ng_arg_long("observe", "group", optarg, 0, 65535, &n))
				return 2;
			o.group = (int)n;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	/* History: asked for, or all the agent keeps when no --follow. */
	o.history = since || !o.follow;
	if (t.netns || t.pid > 0) {
		if (since) {
			fprintf(stderr,
				"%s: --since: the agent's history; with --netns or --pid there is none\n",
				o.cmd);
			return 2;
		}
		o.netns_fd = ng_target_open(&t, path, sizeof(path));
		if (o.netns_fd < 0)
			return 2;
		rc = ng_flowcli_direct(&o);
		close(o.netns_fd);
		return rc;
	}
	rc = ng_flowcli_agent(&o);
	if (rc != NG_FLOWCLI_NO_AGENT)
		return rc;
	if (!o.filter.pod || since) {
		fprintf(stderr,
			"%s: no agent serves (no %s/agent.sock): the node-wide flow log and its history are "
			"the agent's; one pod's own namespace: --pod NS/NAME --follow (or --netns/--pid)\n",
			o.cmd, o.state_dir);
		return 2;
	}
	return ng_flowcli_direct(&o);
}
