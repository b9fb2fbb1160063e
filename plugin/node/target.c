#include "node/target.h"

#include <stdio.h>

#include "kernel/netns.h"

int ng_target_open(const char *cmd, const char *netns, int pid, char *path, size_t len)
{
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
