/* The pod record: what the plugin tells the node about each attachment it
 * decided, one file per attachment under stateDir:
 *
 *   agent.lock                    flock(LOCK_EX) held by the serving agent
 *   pods/<container>@<if>.json    a pod ADD enforced or skipped; DEL
 *                                 removes it. A pod whose names the agent
 *                                 learns is written twice: "pending"
 *                                 before its tables are built (the agent
 *                                 binds its queue meanwhile), "enforced"
 *                                 once ADD succeeded (the drift watch
 *                                 starts then: ADD's own commits are not
 *                                 drift)
 *   pods/<container>@<if>.refused.json
 *                                 a refused or failed ADD: the runtime DELs
 *                                 the sandbox after a failed ADD and the
 *                                 pod would vanish from view, so it is
 *                                 kept until a later ADD of the pod decided
 *                                 or NG_REFUSED_KEEP_S passed (the agent
 *                                 removes it)
 *   ready/<container>@<if>        written by the agent once the pod's queue
 *                                 is bound: the record's nonce
 *
 * A record holds everything a later rebuild of the pod needs and nothing
 * it would have to read from the pod again: ADD's whole stdin (config,
 * prevResult, runtimeConfig: the policy layer compiles the same policy
 * from it), the pod's identity with its namespace's nsfs identity (a path
 * reused by another namespace is not the pod's), the link facts ADD
 * planned with (MAC, link-local addresses, ifindexes, host peer: never the
 * pod's present, which a process with NET_ADMIN there chooses), and the
 * tables that enforce the pod (namespace, family, name).
 *
 * Written with one temp file + rename (readers never see half a record),
 * without fsync: stateDir is runtime state (tmpfs /run), rebuilt by the
 * next ADD. */
#ifndef NG_RECORD_H
#define NG_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/vec.h"
#include "policy/policy.h"
#include "policy/select.h"
#include "spec/podref.h"

#define NG_RECORD_VERSION   2
#define NG_RECORD_MAX       (1024 * 1024 + 16384) /* bytes; ADD's stdin is bounded below 1 MiB */
#define NG_PODS_DIR         "pods"
#define NG_READY_DIR        "ready"
#define NG_AGENT_LOCK       "agent.lock"
#define NG_REFUSED_SUFFIX   ".refused.json"
#define NG_REFUSED_KEEP_S   3600
#define NG_NONCE_LEN        32 /* hex digits */
/* How long ADD waits for the agent to pick a pod up (code 11 after): a
 * restarted agent serves within 1 s. */
#define NG_AGENT_PICKUP_MS  3000
#define NG_AGENT_RELEASE_MS 1000

/* A table that enforces the pod: in its namespace or the node's. */
struct ng_record_table {
	bool in_node;
	uint8_t family; /* NFPROTO_INET / NFPROTO_NETDEV */
	char name[256]; /* nf_tables names are up to 256 bytes (ngh.<cid>.<ifname>) */
};
typedef NG_VEC(struct ng_record_table) ng_record_table_vec;

struct ng_record {
	char key[256]; /* <container>@<ifname>: the file's name */
	struct ng_podref pod;
	char decision[24]; /* pending, enforced, skipped, refused, error */
	char reason[256];
	int code;
	int64_t at_ms; /* unix time of the decision, ms */
	bool learn;    /* egress.names "learn": the agent learns the pod's names */
	bool audit;    /* enforce.auditNamespaces: the tables let refusals through */
	char nonce[NG_NONCE_LEN + 1];
	ng_record_table_vec tables;
	bool have_link; /* link facts recorded (an enforced pod's, from ADD) */
	struct ng_link_facts link;
	json_t *conf; /* ADD's stdin (enforced or pending; owned) */
	bool refused_file;
	/* The policy generation (state/policygen.h) whose entry `conf` was
	 * planned from: stamped by ADD when its entry is the agent's current
	 * one, by the agent when it re-plans the pod (live policy); 0 unknown. */
	uint64_t generation;
	/* The least the pod keeps (policy/select.h): a live policy change
	 * never selects a running pod less; every rebuild honours it. */
	enum ng_keep keep;
};

/* "<container>@<ifname>", refusing a container ID that is not a safe file
 * name (the CNI spec allows letters, digits, '_', '-', '.'). */
int ng_record_key(const char *container_id, const char *ifname, char *buf, size_t len, struct ng_err *err);

/* The tables that enforce a pod with policy `p`: the inet table, the
 * packet-socket guard when p->raw_guard, the host-side `host_table` when
 * p->host. The one list ADD records and every reader uses. -1 OOM. */
int ng_record_tables(const struct ng_policy *p, const char *host_table, ng_record_table_vec *out);

/* The host-side table of the record, or NULL. */
const struct ng_record_table *ng_record_host_table(const struct ng_record *r);

/* Record <-> JSON. Pure. from_json validates and takes its own refs. */
json_t *ng_record_to_json(const struct ng_record *r);
int ng_record_from_json(const json_t *o, struct ng_record *r, struct ng_err *err);

/* A fresh nonce into r->nonce. */
int ng_record_new_nonce(struct ng_record *r, struct ng_err *err);

/* Writes pods/<key>.json, or <key>.refused.json for a refused or failed
 * ADD (a decided ADD also removes the pod's earlier refused record). With
 * `create`, stateDir and its subdirectories are made when missing (a pod
 * the agent must learn for); without, nothing is written when stateDir is
 * not there (no agent was ever installed on this node). */
int ng_record_write(const char *state_dir, const struct ng_record *r, bool create, struct ng_err *err);
/* The agent's re-plan of a running pod: writes pods/<key>.json only in
 * place of the file of inode `expect_ino` (the record it planned from), so
 * that a DEL (the record gone) or a retried ADD (a new record) meanwhile
 * is never overwritten or brought back. 0 written (*new_ino: the new
 * file's inode), 1 the record is gone or another now (nothing written),
 * -1 with err. */
int ng_record_replace(const char *state_dir, const struct ng_record *r, uint64_t expect_ino,
		      uint64_t *new_ino, struct ng_err *err);
/* Reads one record file; the file's name must be its key. */
int ng_record_read(const char *path, struct ng_record *r, struct ng_err *err);
void ng_record_free(struct ng_record *r);

/* A record file name: "<key>.json" or "<key>.refused.json"; the key into
 * `key`. false for anything else (temp files, strangers). */
bool ng_record_name(const char *name, char *key, size_t len, bool *refused);

/* Creates stateDir and its subdirectories (0755, root) when missing. */
int ng_state_dirs(const char *state_dir, struct ng_err *err);

#endif
