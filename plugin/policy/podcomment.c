/* The table comment: who a pod's tables are for, written at compile and
 * read back by DEL (is this table this attachment's?), verify and stats. */
#include "policy/podcomment.h"

#include <stdio.h>
#include <string.h>

#include "base/version.h"

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* "boxxkite-netguard 0.1.0: container CID if IFNAME pod NS/NAME" (with
 * " AUDIT" after the version for an audited pod), cut to
 * the 127 bytes nftables keeps for a comment. The attachment comes first so
 * that a long pod name never cuts the part DEL reads to know the table is
 * its own (a 64-character container id leaves room for ~24 of the pod). */
void ng_policy_describe_pod(const struct ng_podref *pod, struct ng_policy *out)
{
	char full[1024];
	struct ng_podref none = {0};

	if (!pod)
		pod = &none;
	snprintf(full, sizeof(full), "%s/%s", or_dash(pod->ns), or_dash(pod->name));
	memcpy(out->pod, full, sizeof(out->pod) - 1);
	out->pod[sizeof(out->pod) - 1] = '\0';
	snprintf(full, sizeof(full), "boxxkite-netguard %s%s: container %s if %s pod %s", NG_VERSION,
		 out->audit ? " AUDIT" : "", or_dash(pod->container_id),
		 pod->ifname[0] ? pod->ifname : "eth0", out->pod);
	memcpy(out->comment, full, sizeof(out->comment) - 1);
	out->comment[sizeof(out->comment) - 1] = '\0';
	snprintf(out->container_id, sizeof(out->container_id), "%s", pod->container_id);
}

static void copy_part(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", strcmp(src, "-") ? src : "");
}

/* Reads both forms: "... container CID if IF pod NS/NAME" (this version)
 * and "... pod NS/NAME container CID12" (0.1, no interface). */
bool ng_podref_from_comment(const char *comment, struct ng_podref *out)
{
	char buf[256], *pod, *slash, *ctr, *ifn;

	memset(out, 0, sizeof(*out));
	snprintf(buf, sizeof(buf), "%s", comment);
	if (strncmp(buf, "boxxkite-netguard ", 18) != 0)
		return false;
	ctr = strstr(buf, ": container ");
	if (ctr) {
		ctr += 12;
		ifn = strstr(ctr, " if ");
		if (!ifn)
			return false;
		*ifn = '\0';
		ifn += 4;
		pod = strstr(ifn, " pod ");
		if (pod) {
			*pod = '\0';
			pod += 5;
		}
		copy_part(out->container_id, sizeof(out->container_id), ctr);
		snprintf(out->ifname, sizeof(out->ifname), "%s", ifn);
		if (!pod) /* cut in the middle: the attachment is whole */
			return true;
	} else {
		pod = strstr(buf, ": pod ");
		if (!pod)
			return false;
		pod += 6;
		ctr = strstr(pod, " container ");
		if (!ctr)
			return false;
		*ctr = '\0';
		copy_part(out->container_id, sizeof(out->container_id), ctr + 11);
	}
	slash = strchr(pod, '/');
	if (!slash)
		return out->ifname[0] != '\0';
	*slash = '\0';
	copy_part(out->ns, sizeof(out->ns), pod);
	copy_part(out->name, sizeof(out->name), slash + 1);
	return true;
}
