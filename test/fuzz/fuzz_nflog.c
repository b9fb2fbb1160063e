/* Fuzz target: what the flow log reads from NFLOG (kernel/nflog.c's
 * parse, then node/flowev.c's event, its JSON and text, and back from the
 * JSON as `observe` reads the agent's stream). The payload is a pod's own
 * packet; a pod holding NET_ADMIN in its namespace may log to the group
 * with prefixes of its own. The first byte picks the socket the message
 * came in on (the pod's or the node's) and what the reader knows. */
#include <jansson.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/nlwalk.h"
#include "kernel/nflog.h"
#include "node/flowev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const struct ng_nflog_record *r, uint8_t how)
{
	const struct ng_flow_who who = {.ns = "sandboxes",
					.name = "web",
					.deny_known = how & 2,
					.deny = how & 4 ? NG_DENY_DROP : NG_DENY_REJECT};
	struct ng_flow_ev ev, back;
	struct ng_err err = {0};
	char line[1200], ns[64], name[254];
	json_t *j;

	ng_flowev_from_nflog(r, &who, how & 1, 1796000000000LL, &ev);
	ng_flowev_who_of_prefix(r->prefix, ns, sizeof(ns), name, sizeof(name));
	ng_flowev_text(&ev, line, sizeof(line));
	j = ng_flowev_to_json(&ev);
	if (!j)
		abort(); /* every event is valid JSON */
	if (ng_flowev_from_json(j, &back, &err) < 0)
		abort(); /* and reads back */
	json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* As ng_nl_recv_kernel leaves it: NLMSG_ALIGNTO zero bytes after. */
	uint8_t *buf;
	size_t n;

	if (size < 1)
		return 0;
	buf = calloc(1, size - 1 + NLMSG_ALIGNTO);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	n = size - 1;
	for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; ng_nlmsg_ok(h, n);
	     h = ng_nlmsg_next(h, &n)) {
		struct ng_nflog_record r;

		if (ng_nflog_parse(h, &r))
			one(&r, data[0]);
	}
	free(buf);
	return 0;
}
