#include "node/verify_table.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/peer.h"
#include "kernel/ruleset.h"
#include "nft/render.h"
#include "nft/snapshot.h"
#include "policy/pod_policy.h"
#include "policy/podcomment.h"
#include "state/record.h"

/* Reads the pod identity out of the table comment line of a snapshot. */
static bool pod_from_snapshot(const struct ng_snapshot *s, char *buf, size_t len, struct ng_podref *id)
{
	for (size_t i = 0; i < s->lines.n; i++) {
		const char *l = s->lines.v[i], *c = strstr(l, " comment \"");

		if (strncmp(l, "table ", 6) != 0 || !c)
			continue;
		snprintf(buf, len, "%s", c + 10);
		if (*buf)
			buf[strlen(buf) - 1] = '\0'; /* closing quote */
		return ng_podref_from_comment(buf, id);
	}
	return false;
}

/* The table comment keeps 127 bytes: after a 64-character container id
 * the pod's name is cut ("pod boxxkite-sandbo"). The attachment is whole,
 * so the pod's record (stateDir/pods/<container>@<if>.json) names the pod,
 * when it is this namespace's (the nsfs identity ADD recorded). */
static void from_record(const struct run *r, struct ng_podref *id)
{
	char key[256], path[4600];
	struct ng_record rec;
	struct ng_err err = {0};
	struct stat st;

	if (!r->have_cfg || !id->container_id[0] || !id->ifname[0] || stat(r->target, &st) < 0 ||
	    ng_record_key(id->container_id, id->ifname, key, sizeof(key), &err) < 0)
		return;
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", r->cfg.state_dir, key);
	if (ng_record_read(path, &rec, &err) < 0)
		return;
	if ((uint64_t)st.st_ino == rec.pod.netns_ino &&
	    (!rec.pod.netns_dev || (uint64_t)st.st_dev == rec.pod.netns_dev)) {
		snprintf(id->ns, sizeof(id->ns), "%s", rec.pod.ns);
		snprintf(id->name, sizeof(id->name), "%s", rec.pod.name);
	}
	ng_record_free(&rec);
}

void ng_verify_table(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni)
{
	struct ng_snapshot have = {.table = NG_TABLE};
	struct ng_pod_policy pp = {0};
	struct ng_podref id = {0};
	struct ng_err err = {0};
	size_t objects = 0;
	char comment[256];
	int rc;

	rc = ng_ruleset_snapshot(nl, NG_TABLE, &have, &err);
	if (rc == -ENOENT) {
		ng_vrow(r, "layer 2: table present", NG_FAIL, -1,
			"no table inet %s in this namespace: the pod is not protected by netguard", NG_TABLE);
		ng_snapshot_free(&have);
		return;
	}
	if (rc < 0) {
		ng_vrow(r, "layer 2: table present", NG_FAIL, -1, "%s", err.msg);
		ng_snapshot_free(&have);
		return;
	}
	if (pod_from_snapshot(&have, comment, sizeof(comment), &id)) {
		from_record(r, &id);
		ng_podref_name(&id, r->pod, sizeof(r->pod));
		snprintf(r->container_id, sizeof(r->container_id), "%s", id.container_id);
	}
	ng_vrow(r, "layer 2: table present", NG_PASS, -1, "table inet %s%s%s", NG_TABLE,
		r->pod[0] ? ", pod " : "", r->pod);

	if (!r->have_cfg) {
		ng_vrow(r, "layer 2: rules match policy", NG_SKIP, -1, "no configuration to compare with");
		goto out;
	}
	/* prevResult rebuilt from the namespace itself: its addresses and the
	 * gateways of its default routes; the guard's interface is the pod's
	 * first one other than loopback. */
	for (size_t i = 0; i < ni->links.n && !id.ifname[0]; i++)
		if (!ni->links.v[i].loopback)
			snprintf(id.ifname, sizeof(id.ifname), "%s", ni->links.v[i].name);
	/* The pod's selection and policy, exactly as ADD and CHECK decide them. */
	if (ng_pod_policy_build(r->cfg_json, &r->cfg, &ni->prev, &id, NULL, NULL, &pp, &err) < 0) {
		ng_vrow(r, "layer 2: rules match policy", NG_FAIL, -1, "%s", err.msg);
		goto out;
	}
	if (!pp.enforced) {
		ng_vrow(r, "layer 2: rules match policy", NG_FAIL, -1,
			"the configuration does not enforce this pod: %s", pp.reason);
		goto out;
	}
	/* The pod's link-local addresses are allowed sources, as at ADD. */
	if (!id.ifname[0]) {
		ng_vrow(r, "layer 2: rules match policy", NG_FAIL, -1,
			"the namespace has no interface but loopback");
		goto out;
	}
	snprintf(r->ifname, sizeof(r->ifname), "%s", id.ifname);
	{
		struct ng_link_facts f;

		if (ng_link_read_here(id.ifname, &f, &err) < 0 ||
		    ng_policy_link(&pp.policy, &f, false, &err) < 0) {
			ng_vrow(r, "layer 2: rules match policy", NG_FAIL, -1, "%s", err.msg);
			goto out;
		}
	}
	/* The same comparison as CHECK, both tables. */
	rc = ng_ruleset_check(nl, &pp.policy, NG_TABLE, &objects, &err);
	if (rc == 0)
		ng_vrow(r, "layer 2: rules match policy", NG_PASS, -1,
			"identical to what %s compiles to (%zu objects)", r->cfg_path, objects);
	else
		ng_vrow(r, "layer 2: rules match policy", NG_FAIL, -1, "%s", err.msg);
	/* Matching an audit policy is not protection: never a PASS. */
	if (pp.audit)
		ng_vrow(r, "audit: not enforcing", NG_FAIL, -1,
			"namespace %s is in enforce.auditNamespaces: what the policy refuses is counted "
			"(would_deny), logged and let through; only cloud metadata is refused",
			id.ns[0] ? id.ns : "-");
	/* The host side is compared from the node's namespace (verify_host.c). */
	r->policy = pp.policy;
	r->have_policy = true;
	memset(&pp.policy, 0, sizeof(pp.policy));
out:
	ng_pod_policy_free(&pp);
	ng_snapshot_free(&have);
}
