/* The host-side table: in the node's network namespace, on the ingress of
 * the host side of the pod's link (the veth peer), where a process in the
 * pod, whatever its capabilities, cannot reach it. It is the packet-socket
 * guard's stateless egress mirror (render_raw.c, the same rules and sets
 * built by the same code) plus three checks of its own: the device index it
 * was made for, the pod's MAC, and (as in every table) the pod's own source
 * addresses. One table per attachment (container id + interface), named
 * after it, so DEL finds it without the pod's namespace or prevResult. */
#ifndef NG_RENDER_HOST_H
#define NG_RENDER_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "nft/batch.h"
#include "base/err.h"
#include "policy/policy.h"

/* Table netdev ngh.<container id>.<ifname>: each byte outside [A-Za-z0-9-]
 * written as _XX (hex), so the name is injective, a valid nft identifier
 * (`nft list table netdev ngh.<...>.eth0`) and read back by
 * ng_host_table_parse. For a 64-hex container id and "eth0": 73 bytes. */
#define NG_HOST_TABLE_PREFIX  "ngh."
#define NG_HOST_TABLE_MAX     256 /* NFT_NAME_MAXLEN, NUL included */
#define NG_HOST_CHAIN         "from_pod"
#define NG_HOST_CHAIN_REFUSE  "refuse_host"
#define NG_HOST_CHAIN_OBSERVE "to_pod"
#define NG_COUNTER_HOST       "host_denied"

/* The host-side table's name for attachment (container_id, ifname), into
 * buf. 0; -EINVAL for an empty id or ifname; -ENAMETOOLONG when it would
 * not fit `len` or NG_HOST_TABLE_MAX. */
int ng_host_table_name(const char *container_id, const char *ifname, char *buf, size_t len);

/* The attachment back from a table name; false when it is not one of ours. */
bool ng_host_table_parse(const char *name, char *container_id, size_t id_len, char *ifname, size_t if_len);

/* "ifindex N dev DEV network NET" back from the table's comment (policy.c
 * writes it; ADD and GC read which device a table is for from it, one
 * table dump instead of a dump of every chain); false when the comment is
 * not a host-side table's. dev: 16 bytes. */
bool ng_host_comment_parse(const char *comment, int *ifindex, char *dev, char *network, size_t len);

/* Appends, to a batch of family netdev whose b->table is the host table's
 * name: the removal of each table named in `stale` (create-if-missing then
 * delete, so a table another ADD removed first is no error), then the host
 * table: created exclusively (EEXIST when it is there) or, with `replace`,
 * anew. Ends the batch. */
int ng_render_host(const struct ng_policy *p, bool replace, const char *const *stale, size_t n_stale,
		   struct ng_batch *b, struct ng_err *err);

/* Appends the removal of each table in `names` and ends the batch. With
 * `must_exist`, a plain delete (ENOENT when absent: no transaction, and no
 * RCU grace period to wait out at close); else create-if-missing first. */
int ng_render_host_delete(const char *const *names, size_t n, bool must_exist, struct ng_batch *b,
			  struct ng_err *err);

#endif
