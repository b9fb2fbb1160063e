/* The host-side tables in the node's namespace (nft/render_host.h): what
 * ADD, DEL, CHECK and GC do with them over a netfilter socket opened where
 * the plugin runs. Each change is one transaction. */
#ifndef NG_HOSTSIDE_H
#define NG_HOSTSIDE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/vec.h"
#include "kernel/nl.h"
#include "policy/policy.h"

/* One host-side table found in the node's namespace. */
struct ng_host_table {
	char name[256];
	char container_id[256], ifname[16]; /* from the name */
	char network[128];                  /* from the comment; "" when unreadable */
	int ifindex;                        /* recorded in the comment; 0 when unreadable */
	char device[16];                    /* its base chain's device; "" when none */
	bool gone;                          /* no device of that name and index */
};
typedef NG_VEC(struct ng_host_table) ng_host_tables;

/* Every ngh.* netdev table of the namespace. */
int ng_host_scan(struct ng_nl *nl, ng_host_tables *out, struct ng_err *err);

/* ADD: one transaction that creates `table`, or replaces it when it is
 * there (a retried ADD). It reads nothing else of the node: stale tables
 * (another attachment's left on a device of this name, any whose device
 * is gone) are GC's and the agent's to remove (ng_host_gc). */
int ng_host_apply(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err);
/* The agent's repair or re-plan of a running pod: one transaction that
 * replaces `table` whether or not it is there (never an exclusive create
 * first: a refused transaction costs the node's namespace an RCU grace
 * period under its commit lock, which every pod's re-plan shares). */
int ng_host_replace(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err);

/* DEL: removes `table` if present (0 either way). */
int ng_host_delete(struct ng_nl *nl, const char *table, struct ng_err *err);

/* CHECK: 0 when `table` is exactly what `p` renders to (code 111 otherwise). */
int ng_host_check(struct ng_nl *nl, const struct ng_policy *p, const char *table, size_t *objects,
		  struct ng_err *err);

/* One attachment (CNI GC's cni.dev/valid-attachments). */
struct ng_attachment {
	const char *container_id, *ifname;
};

/* GC: removes, in one transaction, the tables of network `network` whose
 * attachment is not in `valid`, and any whose device is gone. *removed:
 * how many. */
int ng_host_gc(struct ng_nl *nl, const char *network, const struct ng_attachment *valid, size_t n_valid,
	       size_t *removed, struct ng_err *err);

#endif
