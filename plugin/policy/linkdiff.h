/* The pod's link as ADD recorded it against the link as it is now: what
 * changed, named for an operator ("mac 02:00:00:00:00:01 -> 02:..:02",
 * "link-local fe80::1 added"). Every rebuild uses the recorded facts; a
 * difference is drift to report, never a fact to adopt (a process with
 * NET_ADMIN in the pod chooses the present). Pure. */
#ifndef NG_LINKDIFF_H
#define NG_LINKDIFF_H

#include <stddef.h>

#include "policy/policy.h"

/* How many facts differ (MAC, each link-local address added or gone, the
 * pod's ifindex, the host peer and its ifindex); their description, "; "
 * between them, into `out` ("" when none; cut to `len`). */
int ng_link_diff(const struct ng_link_facts *recorded, const struct ng_link_facts *live, char *out,
		 size_t len);

#endif
