/* verify: the host-side table (hostMirror), from the node's namespace. */
#ifndef NG_VERIFY_HOST_H
#define NG_VERIFY_HOST_H

#include "node/verify_report.h"

/* One row: the pod's host-side table is present in this (the node's)
 * namespace, identical to what the policy renders to, and bound to the
 * pod link's own peer and its ifindex. `pod_fd`: the pod's namespace. */
void ng_verify_host(struct run *r, int pod_fd);

#endif
