#include "kernel/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static bool same_ns(const struct stat *a, const char *other)
{
	struct stat b;

	if (stat(other, &b) < 0)
		return false;
	return a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

bool ng_netns_same(const char *a, const char *b)
{
	struct stat x;

	return stat(a, &x) == 0 && same_ns(&x, b);
}

/* The calling thread's namespace, not /proc/self (the main thread's): in
 * the agent another thread may be inside a pod's namespace just now. */
bool ng_netns_is_node(const char *path)
{
	return ng_netns_same(path, "/proc/thread-self/ns/net") || ng_netns_same(path, "/proc/1/ns/net");
}

int ng_netns_open(const char *path, int *fd, enum ng_netns_status *status, struct ng_err *err)
{
	struct stat st;
	int f, type;

	*fd = -1;
	*status = NG_NETNS_OK;
	/* A namespace file (nsfs, bind-mounted or under /proc) is a regular
	 * file. Anything else is not a namespace, and must not even be opened:
	 * opening a FIFO blocks until a writer comes, and a DEL that hangs
	 * leaves the pod stuck terminating. */
	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*status = NG_NETNS_GONE;
			return 0;
		}
		return ng_fail(err, NG_E_NETNS, "%s: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		*status = NG_NETNS_GONE;
		return 0;
	}
	f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f < 0) {
		if (errno == ENOENT) {
			*status = NG_NETNS_GONE;
			return 0;
		}
		return ng_fail(err, NG_E_NETNS, "%s: cannot open: %s", path, strerror(errno));
	}
	/* NS_GET_NSTYPE (Linux 4.11) answers for nsfs files only; a regular
	 * file (a bind-mount target left after the namespace was unmounted)
	 * or a directory gets ENOTTY. */
	type = ioctl(f, NS_GET_NSTYPE);
	if (type < 0) {
		int e = errno;

		close(f);
		if (e == ENOTTY || e == EINVAL) {
			*status = NG_NETNS_GONE;
			return 0;
		}
		return ng_fail(err, NG_E_NETNS, "%s: cannot query the namespace type: %s", path, strerror(e));
	}
	if (type != CLONE_NEWNET) {
		close(f);
		return ng_fail(err, NG_E_NETNS, "%s: is a namespace, but not a network namespace", path);
	}
	if (fstat(f, &st) < 0) {
		close(f);
		return ng_fail(err, NG_E_NETNS, "%s: fstat: %s", path, strerror(errno));
	}
	if (same_ns(&st, "/proc/thread-self/ns/net") || same_ns(&st, "/proc/1/ns/net")) {
		close(f);
		return ng_fail(
			err, NG_E_ENV,
			"%s: is the node's own network namespace; the plugin never acts on the node itself",
			path);
	}
	*fd = f;
	return 0;
}

static bool is_recorded(const struct ng_podref *pod, const struct stat *st)
{
	return (!pod->netns_dev || (uint64_t)st->st_dev == pod->netns_dev) &&
	       (!pod->netns_ino || (uint64_t)st->st_ino == pod->netns_ino);
}

int ng_netns_open_pod(const struct ng_podref *pod, int *fd, struct ng_err *err)
{
	enum ng_netns_status st;
	struct stat sb;

	*fd = -1;
	if (!pod->netns || !pod->netns[0])
		return 1;
	if (ng_netns_open(pod->netns, fd, &st, err) < 0)
		return -1;
	if (st == NG_NETNS_GONE)
		return 1;
	if (fstat(*fd, &sb) < 0 || !is_recorded(pod, &sb)) {
		close(*fd);
		*fd = -1;
		return 1;
	}
	return 0;
}

bool ng_netns_still_pods(const struct ng_podref *pod)
{
	struct stat sb;

	return pod->netns && stat(pod->netns, &sb) == 0 && is_recorded(pod, &sb);
}

int ng_netns_run(int fd, int (*fn)(void *data), void *data, struct ng_err *err)
{
	int orig, rc;

	orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0)
		return ng_fail(err, NG_E_NETNS, "cannot open the current network namespace: %s",
			       strerror(errno));
	if (setns(fd, CLONE_NEWNET) < 0) {
		int e = errno;

		close(orig);
		return ng_fail(err, NG_E_NETNS, "cannot enter the pod's network namespace: %s%s", strerror(e),
			       e == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
	}
	rc = fn(data);
	if (setns(orig, CLONE_NEWNET) < 0) {
		/* Never continue in the wrong namespace (iproute2 does the same). */
		fprintf(stderr, "boxxkite-netguard: cannot return to the original network namespace: %s\n",
			strerror(errno));
		abort();
	}
	close(orig);
	return rc;
}
