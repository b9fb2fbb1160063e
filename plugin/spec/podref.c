#include "spec/podref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put(char *dst, size_t len, const char *src, const char *what, struct ng_err *err)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= len)
		return ng_fail(err, NG_E_ENV, "%s is longer than %zu bytes", what, len - 1);
	memcpy(dst, src ? src : "", n + 1);
	return 0;
}

int ng_podref_set(struct ng_podref *r, const char *ns, const char *name, const char *container_id,
		  const char *ifname, const char *netns, struct ng_err *err)
{
	memset(r, 0, sizeof(*r));
	if (put(r->ns, sizeof(r->ns), ns, "K8S_POD_NAMESPACE", err) < 0 ||
	    put(r->name, sizeof(r->name), name, "K8S_POD_NAME", err) < 0 ||
	    put(r->container_id, sizeof(r->container_id), container_id, "CNI_CONTAINERID", err) < 0 ||
	    put(r->ifname, sizeof(r->ifname), ifname, "CNI_IFNAME", err) < 0)
		return -1;
	if (netns && *netns && !(r->netns = strdup(netns)))
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	return 0;
}

int ng_podref_copy(struct ng_podref *dst, const struct ng_podref *src)
{
	*dst = *src;
	dst->netns = NULL;
	if (src->netns && !(dst->netns = strdup(src->netns)))
		return -1;
	return 0;
}

void ng_podref_free(struct ng_podref *r)
{
	free(r->netns);
	r->netns = NULL;
}

void ng_podref_name(const struct ng_podref *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", r->ns[0] ? r->ns : "-", r->name[0] ? r->name : "-");
}
