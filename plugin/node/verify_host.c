#include "node/verify_host.h"

#include <string.h>

#include "kernel/hostside.h"
#include "kernel/nl.h"
#include "kernel/peer.h"
#include "nft/render_host.h"

#define ROW "layer 2: host side present, matches, on the pod's device"

void ng_verify_host(struct run *r, int pod_fd)
{
	struct ng_link_facts f;
	struct ng_err err = {0};
	char name[NG_HOST_TABLE_MAX], why[256];
	size_t objects = 0;
	struct ng_nl node;
	int rc;

	if (!r->have_policy) {
		ng_vrow(r, ROW, NG_SKIP, -1, "no policy to compare with (see the rows above)");
		return;
	}
	if (r->cfg.host_mirror == NG_HOST_OFF) {
		ng_vrow(r, ROW, NG_INFO, -1, "hostMirror is \"off\": the pod's own tables only");
		return;
	}
	if (ng_host_table_name(r->container_id, r->ifname, name, sizeof(name)) < 0) {
		ng_vrow(r, ROW, NG_FAIL, -1,
			"the pod's table records no attachment (container id, interface)");
		return;
	}
	if (ng_peer_find(pod_fd, r->ifname, &f, why, sizeof(why), &err) < 0) {
		ng_vrow(r, ROW, NG_FAIL, -1, "%s", err.msg);
		return;
	}
	if (!f.peer[0]) {
		ng_vrow(r, ROW, r->cfg.host_mirror == NG_HOST_REQUIRED ? NG_FAIL : NG_INFO, -1,
			"no per-pod host device: %s", why);
		return;
	}
	if (ng_policy_link(&r->policy, &f, true, &err) < 0 || ng_nl_open(&node, &err) < 0) {
		ng_vrow(r, ROW, NG_FAIL, -1, "%s", err.msg);
		return;
	}
	/* The same comparison as CHECK: the chain's device and the ifindex
	 * rule are part of what is compared. */
	rc = ng_host_check(&node, &r->policy, name, &objects, &err);
	ng_nl_close(&node);
	if (rc == 0)
		ng_vrow(r, ROW, NG_PASS, -1, "table netdev %s on %s (ifindex %d), identical (%zu objects)",
			name, f.peer, f.peer_ifindex, objects);
	else
		ng_vrow(r, ROW, NG_FAIL, -1, "%s", err.msg);
}
