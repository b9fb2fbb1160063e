#include "cni/hostmirror.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/vec.h"
#include "kernel/hostside.h"
#include "kernel/nl.h"
#include "kernel/peer.h"
#include "kernel/podtables.h"
#include "nft/render_host.h"
#include "policy/linkdiff.h"

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
		       const struct ng_link_facts *recorded, struct ng_policy *p, struct ng_link_facts *link,
		       char *drift, size_t drift_len, struct ng_log *log, struct ng_err *err)
{
	struct ng_link_facts f;
	char why[256];
	bool want = cfg->host_mirror != NG_HOST_OFF;

	drift[0] = '\0';
	if (ng_peer_find(pod_fd, ifname, &f, why, sizeof(why), err) < 0)
		return -1;
	if (recorded) {
		/* The pod's present is a fact of its choosing: reported, kept
		 * out of the plan. */
		if (ng_link_diff(recorded, &f, drift, drift_len) > 0)
			ng_log_set(log, "link_drift", json_string(drift));
		f = *recorded;
		if (!f.peer[0])
			snprintf(why, sizeof(why), "the recorded link has no per-pod host device");
	}
	if (want && !f.peer[0] && cfg->host_mirror == NG_HOST_REQUIRED)
		return ng_fail(
			err, NG_E_NO_HOST,
			"hostMirror is \"required\" but interface %s has no per-pod device on the node's "
			"side (%s): with macvlan, ipvlan or SR-IOV set hostMirror to \"auto\" or \"off\"",
			ifname, why);
	if (ng_policy_link(p, &f, want, err) < 0)
		return -1;
	*link = f;
	if (p->host) {
		ng_log_set(log, "host_side", json_string(p->host_dev));
		check_hint(prev, p->host_dev, log);
	} else
		ng_log_set(log, "host_side",
			   json_string(want ? why : "hostMirror is \"off\": the pod's own tables only"));
	return 0;
}

int ng_hostmirror_add(struct ng_nl *pod_nl, const struct ng_policy *p, const char *host_table,
		      struct ng_err *err)
{
	return ng_podtables_apply(pod_nl, NULL, p, host_table, err);
}

int ng_hostmirror_del(const char *netns_path, const char *container_id, const char *ifname,
		      const char *host_table, struct ng_log *log, const char **what, struct ng_err *err)
{
	char owner[256];
	int rc = ng_podtables_delete(netns_path, container_id, ifname, host_table, what, owner, sizeof(owner),
				     err);

	if (owner[0])
		ng_log_set(log, "pod_tables_owner", json_string(owner));
	return rc;
}

typedef NG_VEC(struct ng_attachment) attachment_vec;

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
