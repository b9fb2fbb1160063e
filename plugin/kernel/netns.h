/* The pod's network namespace: opened and checked before anything is done
 * in it, and entered only long enough to open a netlink socket there (a
 * socket stays bound to the namespace it was created in), so no other code
 * ever runs in the wrong namespace. */
#ifndef NG_NETNS_H
#define NG_NETNS_H

#include <stdbool.h>

#include "base/err.h"
#include "spec/podref.h"

enum ng_netns_status {
	NG_NETNS_OK,
	NG_NETNS_GONE, /* path missing, or no longer a namespace (after unmount) */
};

/* Opens `path` with O_CLOEXEC and checks it is a network namespace, and not
 * the one this process runs in nor PID 1's: CNI_NETNS pointing at the node
 * must be refused rather than firewall the node. Returns 0 with *fd set and
 * *status OK; 0 with *status GONE and *fd = -1 when there is no namespace
 * any more; -1 with err (code 112, or 4 for the node's own namespace),
 * whose msg starts with the path: the caller says where it came from
 * (CNI_NETNS, --netns, --pid). */
int ng_netns_open(const char *path, int *fd, enum ng_netns_status *status, struct ng_err *err);

/* The pod's recorded namespace: pod->netns, opened as ng_netns_open does
 * and checked against the nsfs identity ADD recorded (a path that now
 * names another namespace is not the pod's). 0 with *fd; 1 when it is gone
 * or another one now (*fd -1); -1 with err. */
int ng_netns_open_pod(const struct ng_podref *pod, int *fd, struct ng_err *err);

/* The same test without opening anything (stat of the path): is the
 * recorded path still the pod's namespace? */
bool ng_netns_still_pods(const struct ng_podref *pod);

/* Whether two paths name the same namespace (same device and inode); and
 * whether a path names the node's: this process's or PID 1's. */
bool ng_netns_same(const char *a, const char *b);
bool ng_netns_is_node(const char *path);

/* Runs fn(data) inside the namespace `fd`, then returns to the original
 * one. If returning fails the process aborts: carrying on in the pod's
 * namespace would apply the node's decisions to the wrong place. */
int ng_netns_run(int fd, int (*fn)(void *data), void *data, struct ng_err *err);

#endif
