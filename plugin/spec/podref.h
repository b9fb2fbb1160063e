/* One pod attachment, named once: who it is (the pod's namespace and name
 * from CNI_ARGS, the runtime's container id and interface name) and where
 * (its network namespace path, with the nsfs identity the path had when
 * ADD saw it: a path later reused by another namespace is not the pod's).
 * Every record, view and table comment of a pod embeds this one struct.
 * Pure. */
#ifndef NG_PODREF_H
#define NG_PODREF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct ng_podref {
	char ns[256];                  /* K8S_POD_NAMESPACE, "" when the runtime gave none */
	char name[256];                /* K8S_POD_NAME */
	char container_id[256];        /* CNI_CONTAINERID */
	char ifname[16];               /* CNI_IFNAME */
	char *netns;                   /* CNI_NETNS (owned; NULL: none) */
	uint64_t netns_dev, netns_ino; /* 0: not known */
};

/* Sets the strings (NULL reads as ""), truncating none: -1 with err (code
 * 4) when one does not fit. The netns is copied; the identity left 0. */
int ng_podref_set(struct ng_podref *r, const char *ns, const char *name, const char *container_id,
		  const char *ifname, const char *netns, struct ng_err *err);
/* A deep copy (dst is overwritten, not freed first). -1 out of memory. */
int ng_podref_copy(struct ng_podref *dst, const struct ng_podref *src);
void ng_podref_free(struct ng_podref *r);

/* "namespace/name", '-' for an unknown part. */
void ng_podref_name(const struct ng_podref *r, char *buf, size_t len);

#endif
