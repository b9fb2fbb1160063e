#include "cni/hostmirror.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/vec.h"
#include "kernel/hostside.h"
#include "kernel/netns.h"
#include "kernel/nl.h"
#include "kernel/nl_netns.h"
#include "kernel/peer.h"
#include "kernel/ruleset.h"
#include "nft/render.h"
#include "nft/render_host.h"

int ng_hostmirror_table(const char *container_id, const char *ifname, char *buf, size_t len,
			struct ng_err *err)
{
	int rc = ng_host_table_name(container_id, ifname, buf, len);

	if (rc == 0)
		return 0;
	return ng_fail(err, NG_E_ENV, "CNI_CONTAINERID and CNI_IFNAME make no host-side table name (%s)",
		       rc == -ENAMETOOLONG ? "longer than nftables allows" : "empty");
}

/* prevResult's interfaces without a sandbox are the host's: is `peer` one? */
static void check_hint(const json_t *prev, const char *peer, struct ng_log *log)
{
	const json_t *ifs = prev ? json_object_get(prev, "interfaces") : NULL, *i;
	bool any = false;
	size_t k;

	json_array_foreach(ifs, k, i) {
		const char *name = json_string_value(json_object_get(i, "name"));

		if (!name || json_object_get(i, "sandbox"))
			continue;
		if (strcmp(name, peer) == 0)
			return;
		any = true;
	}
	if (any)
		ng_log_set(log, "host_interface_hint",
			   json_string("prevResult names other host interfaces than the pod link's peer: the "
				       "kernel's answer is used"));
}

int ng_hostmirror_plan(const struct ng_config *cfg, int pod_fd, const char *ifname, const json_t *prev,
		       struct ng_policy *p, struct ng_log *log, struct ng_err *err)
{
	struct ng_link_facts f;
	char why[256];
	bool want = cfg->host_mirror != NG_HOST_OFF;

	if (ng_peer_find(pod_fd, ifname, &f, why, sizeof(why), err) < 0)
		return -1;
	if (want && !f.peer[0] && cfg->host_mirror == NG_HOST_REQUIRED)
		return ng_fail(
			err, NG_E_NO_HOST,
			"hostMirror is \"required\" but interface %s has no per-pod device on the node's "
			"side (%s): with macvlan, ipvlan or SR-IOV set hostMirror to \"auto\" or \"off\"",
			ifname, why);
	if (ng_policy_link(p, &f, want, err) < 0)
		return -1;
	if (p->host) {
		ng_log_set(log, "host_side", json_string(p->host_dev));
		check_hint(prev, p->host_dev, log);
	} else
		ng_log_set(log, "host_side",
			   json_string(want ? why : "hostMirror is \"off\": the pod's own tables only"));
	return 0;
}

typedef NG_VEC(struct ng_attachment) attachment_vec;

int ng_hostmirror_add(struct ng_nl *pod_nl, const struct ng_policy *p, const char *host_table,
		      struct ng_log *log, struct ng_err *err)
{
	return ng_hostmirror_add_on(pod_nl, NULL, p, host_table, log, err);
}

int ng_hostmirror_add_on(struct ng_nl *pod_nl, struct ng_nl *node_nl, const struct ng_policy *p,
			 const char *host_table, struct ng_log *log, struct ng_err *err)
{
	struct ng_nl own = {0}, *node = node_nl ? node_nl : &own;
	size_t stale = 0;
	int rc;

	if (!node_nl && ng_nl_open(&own, err) < 0)
		return -1;
	/* No host side now (hostMirror "off", or "auto" without a peer): an
	 * earlier ADD's table for this attachment must not stay behind. */
	rc = p->host ? ng_host_apply(node, p, host_table, &stale, err)
		     : ng_host_delete(node, host_table, err);
	if (rc == 0 && stale > 0)
		ng_log_set(log, "host_tables_removed", json_integer((json_int_t)stale));
	if (rc == 0 && ng_ruleset_apply(pod_nl, p, NG_TABLE, err) < 0) {
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

/* The pod's side of DEL, when the namespace is still there and the tables
 * are this attachment's (a DEL for another container id leaves them).
 * Leaves the socket open in *pod (fd -1 when none) so that both sides'
 * deletions are committed before either socket closes: the kernel then
 * frees both in one RCU grace period (measured: make bench, hostside). */
static int del_pod_side(const char *netns_path, const char *container_id, const char *ifname,
			struct ng_nl *pod, struct ng_log *log, const char **what, struct ng_err *err)
{
	enum ng_netns_status st;
	char owner[256];
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
	mine = ng_ruleset_owner(pod, NG_TABLE, container_id, ifname, owner, sizeof(owner), err);
	if (mine == -ENOENT) {
		*what = "no table in the pod (or was not there)";
		memset(err, 0, sizeof(*err));
		return 0;
	}
	if (mine < 0)
		return -1;
	if (mine == 0) {
		ng_log_set(log, "pod_tables_owner", json_string(owner));
		*what = "the pod's tables are another attachment's: left in place";
		return 0;
	}
	*what = "tables removed";
	return ng_ruleset_delete(pod, NG_TABLE, err);
}

int ng_hostmirror_del(const char *netns_path, const char *container_id, const char *ifname,
		      const char *host_table, struct ng_log *log, const char **what, struct ng_err *err)
{
	struct ng_nl pod, node;
	int rc;

	if (ng_nl_open(&node, err) < 0)
		return -1;
	rc = del_pod_side(netns_path, container_id, ifname, &pod, log, what, err);
	if (rc == 0)
		rc = ng_host_delete(&node, host_table, err);
	if (pod.fd >= 0)
		ng_nl_close(&pod);
	ng_nl_close(&node);
	return rc;
}

int ng_hostmirror_check(const struct ng_policy *p, const char *host_table, struct ng_err *err)
{
	struct ng_nl node;
	int rc;

	if (ng_nl_open(&node, err) < 0)
		return -1;
	rc = ng_host_check(&node, p, host_table, NULL, err);
	ng_nl_close(&node);
	return rc;
}

/* cni.dev/valid-attachments: [{"containerID": ..., "ifname": ...}, ...] */
static int read_valid(const json_t *list, attachment_vec *out, struct ng_err *err)
{
	size_t i;
	const json_t *a;

	if (!json_is_array(list))
		return ng_fail(err, NG_E_CONFIG, "cni.dev/valid-attachments: must be an array");
	json_array_foreach(list, i, a) {
		struct ng_attachment at = {json_string_value(json_object_get(a, "containerID")),
					   json_string_value(json_object_get(a, "ifname"))};

		if (!at.container_id || !at.ifname)
			return ng_fail(err, NG_E_CONFIG,
				       "cni.dev/valid-attachments[%zu]: needs \"containerID\" and \"ifname\" "
				       "strings",
				       i);
		if (ng_vec_push(out, &at) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

int ng_hostmirror_gc(const json_t *root, const char *network, struct ng_log *log, struct ng_err *err)
{
	const json_t *list = json_object_get(root, "cni.dev/valid-attachments");
	attachment_vec valid = {0};
	size_t removed = 0;
	struct ng_nl nl;
	int rc = 0;

	if (list && read_valid(list, &valid, err) < 0) {
		ng_vec_free(&valid);
		return -1;
	}
	if (ng_nl_open(&nl, err) < 0) {
		ng_vec_free(&valid);
		return -1;
	}
	/* Without the list nothing is known to be invalid: only the tables
	 * whose device is gone go (an empty network name matches none). */
	rc = ng_host_gc(&nl, list ? network : "", valid.v, valid.n, &removed, err);
	ng_nl_close(&nl);
	ng_vec_free(&valid);
	if (rc == 0)
		ng_log_set(log, "host_tables_removed", json_integer((json_int_t)removed));
	return rc;
}
