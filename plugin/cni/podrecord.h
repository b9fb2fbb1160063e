/* The state record: how ADD tells the agent about a pod whose DNS names it
 * must learn (egress.names "learn"), and how the agent tells ADD it has the
 * pod. Files under stateDir:
 *
 *   agent.lock                   flock(LOCK_EX) held by the serving agent
 *   pods/<container>@<if>.json   one record per pod, written atomically by
 *                                ADD (temp file, rename), removed by DEL
 *   ready/<container>@<if>       written by the agent once the pod's queue
 *                                is bound: the record's nonce
 *
 * A record holds everything the agent needs and nothing it must guess:
 * the whole stdin of ADD (config, prevResult, runtimeConfig: the agent
 * rebuilds the pod's policy with the policy layer, exactly as ADD compiled
 * it), CNI_ARGS, the namespace path and its nsfs identity (a path reused by
 * another namespace is not the pod's), and the list of tables that enforce
 * the pod (namespace, family, name): the agent updates every one of them
 * and knows no table by heart. */
#ifndef NG_PODRECORD_H
#define NG_PODRECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "base/vec.h"

#define NG_RECORD_VERSION   1
#define NG_RECORD_MAX       (1024 * 1024) /* bytes; ADD's stdin is bounded below this */
#define NG_PODS_DIR         "pods"
#define NG_READY_DIR        "ready"
#define NG_AGENT_LOCK       "agent.lock"
#define NG_NONCE_LEN        32 /* hex digits */
/* How long ADD waits for the agent to pick a pod up (code 11 after): a
 * restarted agent serves within 1 s. */
#define NG_AGENT_PICKUP_MS  3000
#define NG_AGENT_RELEASE_MS 1000

/* A table that enforces the pod: in its namespace ("pod") or the node's. */
struct ng_record_table {
	bool in_node;
	uint8_t family; /* NFPROTO_INET / NFPROTO_NETDEV */
	char name[256]; /* nf_tables names are up to 256 bytes (ngh.<cid>.<ifname>) */
};
typedef NG_VEC(struct ng_record_table) ng_record_table_vec;

struct ng_podrecord {
	char key[256]; /* <container>@<ifname>: the file names */
	char container_id[129], ifname[16];
	char netns[4096];
	uint64_t netns_dev, netns_ino;
	char nonce[NG_NONCE_LEN + 1];
	char cni_args[4096];
	json_t *conf; /* ADD's stdin */
	ng_record_table_vec tables;
};

/* "<container>@<ifname>", refusing a container ID that is not a safe file
 * name (the CNI spec allows letters, digits, '_', '-', '.'). */
int ng_record_key(const char *container_id, const char *ifname, char *buf, size_t len, struct ng_err *err);

/* Creates stateDir and its subdirectories (0755, root) when missing. */
int ng_state_dirs(const char *state_dir, struct ng_err *err);

/* ADD: writes the record atomically with a fresh nonce (into r->nonce). */
int ng_record_write(const char *state_dir, struct ng_podrecord *r, struct ng_err *err);
/* Reads and validates the record file `path`; r->conf is owned by r. */
int ng_record_read(const char *path, struct ng_podrecord *r, struct ng_err *err);
void ng_record_free(struct ng_podrecord *r);

/* DEL: removes the record (missing is fine), then waits up to `wait_ms`
 * for the agent to drop the pod (its ready file goes). */
int ng_record_remove(const char *state_dir, const char *key, int wait_ms, struct ng_err *err);

/* ADD: waits until ready/<key> holds `nonce`; code 11 after `timeout_ms`. */
int ng_record_wait_ready(const char *state_dir, const char *key, const char *nonce, int timeout_ms,
			 struct ng_err *err);

/* Agent: writes ready/<key> (the nonce) / removes it. */
int ng_record_set_ready(const char *state_dir, const char *key, const char *nonce, struct ng_err *err);
void ng_record_clear_ready(const char *state_dir, const char *key);

/* Is an agent holding stateDir's lock? 1 yes, 0 no. */
int ng_agent_serving(const char *state_dir);

#endif
