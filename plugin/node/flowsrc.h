/* Where the flow log comes from: one pod's NFLOG group read in its own
 * namespace (its inet table's and its guard's messages: NFLOG delivers in
 * the namespace where the packet was logged), the node's namespace for
 * every host-side table (one socket, each message's pod by the host peer
 * it came in on), and each table's log_skipped counter (nft/render_log.h)
 * read while the table is logging, so that a stream says how many
 * refusals its rate limit held back. The same code serves `observe` and
 * `logs` on their own (one pod) and the agent (every pod of the node).
 *
 * When log_skipped is read: the limit can hold a packet back only within
 * 1/ratePerSecond (at most 1 s) after it let one through, which was
 * logged; so a table is read once a tick while it logged in the last
 * NG_FLOWSRC_POLL_MS, and once more after: a quiet table costs nothing. */
#ifndef NG_FLOWSRC_H
#define NG_FLOWSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kernel/nflog.h"
#include "kernel/nl.h"
#include "node/flowev.h"
#include "policy/policy.h"
#include "spec/podref.h"
#include "state/record.h"

#define NG_FLOWSRC_POLL_MS 3000
#define NG_FLOWSRC_COPY    128 /* bytes of each packet: the Ethernet, IP and transport headers */

/* What a reader must know of a pod: its identity and namespace, its log
 * group, what its refuse rules do (for their comments), its tables. */
struct ng_flow_pod {
	char key[256];
	struct ng_podref pod; /* owned */
	bool nflog;
	uint16_t group;
	bool deny_known; /* from a record: deny is the pod's denyAction */
	enum ng_deny_action deny;
	bool guard; /* rawPacketGuard */
	bool host;  /* a host-side table, host_table, on host_ifindex */
	uint32_t host_ifindex;
	char host_table[256];
};
/* From a record and the policy compiled from it. -1 out of memory. */
int ng_flow_pod_from_record(const struct ng_record *r, const struct ng_policy *pol, struct ng_flow_pod *out);
int ng_flow_pod_copy(struct ng_flow_pod *dst, const struct ng_flow_pod *src);
void ng_flow_pod_free(struct ng_flow_pod *p);
/* Would a reader of a read b the same way (same namespace, group, tables)? */
bool ng_flow_pod_same(const struct ng_flow_pod *a, const struct ng_flow_pod *b);

/* Each event, with the NFLOG message it came from (NULL for notes). */
typedef void (*ng_flow_emit_fn)(const struct ng_flow_ev *ev, const struct ng_nflog_record *r, void *data);

struct ng_flowsrc {
	struct ng_flow_pod info;
	struct ng_nflog log;
	struct ng_nl nl; /* nf_tables in the pod's namespace: its tables' log_skipped */
	bool open;
	uint64_t skipped[3]; /* by enum ng_log_table, as last read */
	bool skipped_known[3];
	int64_t poll_until[3]; /* mono ms: read log_skipped each tick until then (0: quiet) */
	unsigned long lost_told;
};

/* Binds info->group in the pod's namespace (`netns_fd`, or its recorded
 * one when -1) and opens the nf_tables socket beside it; reads the
 * skipped counters' starting values. 0, or -1 with err (the group held by
 * another reader is said so). `info` is copied. */
int ng_flowsrc_open(struct ng_flowsrc *s, const struct ng_flow_pod *info, int netns_fd, struct ng_err *err);
int ng_flowsrc_fd(const struct ng_flowsrc *s);
/* Reads what is waiting (at most `max` messages, 0: no bound), each as an
 * event; a kernel's loss (ENOBUFS) as a "lost" note. The count, or -1. */
int ng_flowsrc_read(struct ng_flowsrc *s, size_t max, ng_flow_emit_fn emit, void *data, struct ng_err *err);
/* Once a tick: the log_skipped counters of the tables that logged lately
 * (every table with all), their growth as "skipped" notes; node_nl (may
 * be NULL) reads the host-side table. */
void ng_flowsrc_skipped(struct ng_flowsrc *s, struct ng_nl *node_nl, int64_t now_ms, bool all,
			ng_flow_emit_fn emit, void *data);
/* A message of the pod's host-side table was read (the node's socket). */
void ng_flowsrc_node_logged(struct ng_flowsrc *s, int64_t now_ms);
void ng_flowsrc_close(struct ng_flowsrc *s);

/* The node's namespace: one socket for every host-side table's group. */
struct ng_flownode {
	struct ng_nflog log;
	bool open;
	struct ng_nl nl; /* the host-side tables' log_skipped */
	bool nl_open;
	unsigned long lost_told;
};
/* The pod of a host peer's ifindex (NULL: none known). */
typedef struct ng_flowsrc *(*ng_flow_find_fn)(void *data, uint32_t ifindex);

int ng_flownode_open(struct ng_flownode *n, struct ng_err *err);
/* Binds `group` unless bound already. */
int ng_flownode_bind(struct ng_flownode *n, uint16_t group, struct ng_err *err);
int ng_flownode_read(struct ng_flownode *n, size_t max, ng_flow_find_fn find, void *fdata,
		     ng_flow_emit_fn emit, void *data, struct ng_err *err);
void ng_flownode_close(struct ng_flownode *n);

#endif
