/* What a network namespace holds, read over rtnetlink from inside it: its
 * links, its global addresses and the gateways its routes go through. `verify` uses it to
 * rebuild the prevResult a runtime would have passed (the pod's addresses
 * and the node-side gateways), and to judge an exec's namespace (layer one:
 * only a loopback). */
#ifndef NG_NETINFO_H
#define NG_NETINFO_H

#include <net/if.h>
#include <stdbool.h>

#include "base/err.h"
#include "spec/prevresult.h"
#include "base/vec.h"

struct ng_link {
	char name[IF_NAMESIZE];
	int ifindex;
	bool up, loopback;
};

struct ng_netinfo {
	NG_VEC(struct ng_link) links;
	struct ng_prev prev; /* addrs: global addresses; gateways: of the routes */
};

/* Reads the current network namespace (call it inside ng_netns_run). */
int ng_netinfo_read(struct ng_netinfo *out, struct ng_err *err);
void ng_netinfo_free(struct ng_netinfo *n);

#endif
