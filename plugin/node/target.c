#include "node/target.h"

#include <stdio.h>

#include "base/cliarg.h"
#include "kernel/netns.h"

int ng_target_getopt(struct ng_target *t, int argc, char **argv, const struct option *opts)
{
	long n;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) == 'n' || c == 'p') {
		if (c == 'n') {
			t->netns = optarg;
		} else {
			if (!ng_arg_long(t->cmd, "pid", optarg, 1, 0x7fffffff, &n))
				return NG_TARGET_BAD;
			t->pid = (int)n;
		}
	}
	return c;
}

int ng_target_open(const struct ng_target *t, char *path, size_t len)
{
	const char *cmd = t->cmd, *netns = t->netns;
	int pid = t->pid;
	struct ng_err err = {0};
	enum ng_netns_status st;
	int fd;

	if ((netns && pid > 0) || (!netns && pid <= 0)) {
		fprintf(stderr, "boxxkite-netguard %s: give exactly one of --netns PATH and --pid PID\n",
			cmd);
		return -1;
	}
	if (netns)
		snprintf(path, len, "%s", netns);
	else
		snprintf(path, len, "/proc/%d/ns/net", pid);
	if (ng_netns_open(path, &fd, &st, &err) < 0) {
		fprintf(stderr, "boxxkite-netguard %s: %s\n", cmd, err.msg);
		return -1;
	}
	if (st != NG_NETNS_OK) {
		fprintf(stderr, "boxxkite-netguard %s: %s is not a network namespace\n", cmd, path);
		return -1;
	}
	return fd;
}
