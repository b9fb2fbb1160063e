#include "node/target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* Errors name the option the user gave ("--netns PATH", "--pid PID"), never
 * the CNI_NETNS of the plugin's own protocol: this is a person at a node. */
int ng_target_open(const struct ng_target *t, char *path, size_t len)
{
	const char *cmd = t->cmd, *netns = t->netns;
	int pid = t->pid;
	struct ng_err err = {0};
	enum ng_netns_status st;
	char opt[64], proc[64];
	struct stat sb;
	int fd;

	if ((netns && pid > 0) || (!netns && pid <= 0)) {
		fprintf(stderr, "boxxkite-netguard %s: give exactly one of --netns PATH and --pid PID\n",
			cmd);
		return -1;
	}
	if (netns) {
		snprintf(path, len, "%s", netns);
	} else {
		snprintf(opt, sizeof(opt), "--pid %d", pid);
		snprintf(proc, sizeof(proc), "/proc/%d", pid);
		if (stat(proc, &sb) < 0) {
			fprintf(stderr, "boxxkite-netguard %s: %s: %s\n", cmd, opt,
				errno == ENOENT ? "no such process" : strerror(errno));
			return -1;
		}
		snprintf(path, len, "/proc/%d/ns/net", pid);
	}
	if (ng_netns_open(path, &fd, &st, &err) < 0) {
		/* err.msg starts with the path. */
		fprintf(stderr, "boxxkite-netguard %s: %s%s%s\n", cmd, netns ? "--netns " : opt,
			netns ? "" : ": ", err.msg);
		return -1;
	}
	if (st == NG_NETNS_OK)
		return fd;
	if (!netns)
		fprintf(stderr, "boxxkite-netguard %s: %s: the process has gone (no %s)\n", cmd, opt, path);
	else if (stat(path, &sb) < 0)
		fprintf(stderr, "boxxkite-netguard %s: --netns %s: %s\n", cmd, netns, strerror(errno));
	else
		fprintf(stderr,
			"boxxkite-netguard %s: --netns %s: not a network namespace (give a file such as "
			"/run/netns/NAME or /proc/PID/ns/net)\n",
			cmd, netns);
	return -1;
}
