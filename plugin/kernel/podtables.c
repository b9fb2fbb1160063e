#include "kernel/podtables.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "kernel/hostside.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "kernel/ruleset.h"
#include "nft/render.h"

/* Both sides: ADD's (an exclusive create first, a failure of the pod's side
 * undoing the host side) or, `running`, a running pod's (replaces, the host
 * side left as applied). */
static int both(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
		const char *host_table, bool running, struct ng_err *err)
{
	struct ng_nl own = {0}, *node = node_nl ? node_nl : &own;
	int rc;

	if (!node_nl && ng_nl_open(&own, err) < 0)
		return -1;
	/* No host side now (hostMirror "off", or "auto" without a peer): an
	 * earlier ADD's table for this attachment must not stay behind. */
	if (!p->host)
		rc = ng_host_delete(node, host_table, err);
	else
		rc = running ? ng_host_replace(node, p, host_table, err)
			     : ng_host_apply(node, p, host_table, err);
	if (rc == 0 && running)
		rc = ng_ruleset_replace(pod_nl, p, NG_TABLE, err);
	else if (rc == 0 && ng_ruleset_apply(pod_nl, p, NG_TABLE, err) < 0) {
		struct ng_err undo = {0};

		rc = -1;
		if (p->host && ng_host_delete(node, host_table, &undo) < 0)
			ng_err_details(err, "and removing the host-side table %s again failed: %s",
				       host_table, undo.msg);
	}
	if (!node_nl)
		ng_nl_close(&own);
	return rc;
}

int ng_podtables_apply(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
		       const char *host_table, struct ng_err *err)
{
	return both(pod_nl, node_nl, p, host_table, false, err);
}

int ng_podtables_replace(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
			 const char *host_table, struct ng_err *err)
{
	return both(pod_nl, node_nl, p, host_table, true, err);
}

/* The pod's side of DEL. Leaves the socket open in *pod (fd -1 when none)
 * for the caller to close after the host side's deletion. */
static int del_pod_side(const char *netns_path, const char *container_id, const char *ifname,
			struct ng_nl *pod, const char **what, char *owner, size_t owner_len,
			struct ng_err *err)
{
	enum ng_netns_status st;
	int fd = -1, rc, mine;

	pod->fd = -1;
	*what = "no CNI_NETNS: the namespace is already gone";
	if (!netns_path)
		return 0;
	if (ng_netns_open(netns_path, &fd, &st, err) < 0) {
		if (err->code != NG_E_ENV) {
			ng_err_prefix(err, "CNI_NETNS ");
			return -1;
		}
		*what = "CNI_NETNS is the node's own namespace: nothing of ours there";
		memset(err, 0, sizeof(*err));
		return 0;
	}
	*what = "the network namespace is already gone";
	if (st == NG_NETNS_GONE)
		return 0;
	rc = ng_nl_open_netns(fd, NULL, pod, err);
	close(fd);
	if (rc < 0)
		return -1;
	mine = ng_ruleset_owner(pod, NG_TABLE, container_id, ifname, owner, owner_len, err);
	if (mine == -ENOENT) {
		*what = "no table in the pod (or was not there)";
		memset(err, 0, sizeof(*err));
		return 0;
	}
	if (mine < 0)
		return -1;
	if (mine == 1)
		owner[0] = '\0';
	if (mine == 0) {
		*what = "the pod's tables are another attachment's: left in place";
		return 0;
	}
	*what = "tables removed";
	return ng_ruleset_delete(pod, NG_TABLE, err);
}

int ng_podtables_delete(const char *netns_path, const char *container_id, const char *ifname,
			const char *host_table, const char **what, char *owner, size_t owner_len,
			struct ng_err *err)
{
	struct ng_nl pod, node;
	int rc;

	owner[0] = '\0';
	if (ng_nl_open(&node, err) < 0)
		return -1;
	rc = del_pod_side(netns_path, container_id, ifname, &pod, what, owner, owner_len, err);
	if (rc == 0)
		rc = ng_host_delete(&node, host_table, err);
	if (pod.fd >= 0)
		ng_nl_close(&pod);
	ng_nl_close(&node);
	return rc;
}

int ng_podtables_check_host(struct ng_nl *node_nl, const struct ng_policy *p, const char *host_table,
			    struct ng_err *err)
{
	struct ng_nl own = {0};
	int rc;

	if (node_nl)
		return ng_host_check(node_nl, p, host_table, NULL, err);
	if (ng_nl_open(&own, err) < 0)
		return -1;
	rc = ng_host_check(&own, p, host_table, NULL, err);
	ng_nl_close(&own);
	return rc;
}
