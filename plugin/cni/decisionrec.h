/* The decision record: what ADD decided about a pod, for every pod the
 * plugin saw (enforced, skipped, refused), so the node agent's /metrics
 * and `boxxkite-netguard status` can list the whole node, not only the
 * pods whose names the agent learns. Files under stateDir:
 *
 *   decisions/<container>@<if>.json          enforced or skipped; DEL
 *                                            removes it
 *   decisions/<container>@<if>.refused.json  a refused or failed ADD. The
 *                                            runtime DELs the sandbox after
 *                                            a failed ADD, and the pod would
 *                                            vanish from view: this one is
 *                                            kept, and the agent removes it
 *                                            once a later ADD of the same
 *                                            pod decided, or after
 *                                            NG_REFUSED_KEEP_S
 *
 * Written with one temp file + rename (readers never see half a record),
 * without fsync: stateDir is runtime state (tmpfs /run), rebuilt by the
 * next ADD. An enforced pod's record carries ADD's stdin (`conf`) and its
 * tables, so the agent's drift watch can rebuild the pod's policy with
 * the policy layer and compare it (and repair it) without guessing. */
#ifndef NG_DECISIONREC_H
#define NG_DECISIONREC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "cni/podrecord.h"

#define NG_DECISIONS_DIR  "decisions"
#define NG_REFUSED_SUFFIX ".refused.json"
#define NG_REFUSED_KEEP_S 3600
#define NG_DECISION_MAX   (NG_RECORD_MAX + 16384)

struct ng_decision {
	char key[256];
	char pod_namespace[256], pod_name[256], container_id[129], ifname[16];
	char *netns; /* owned when read; "" or NULL: none */
	uint64_t netns_ino;
	char decision[24]; /* enforced, skipped, refused, error */
	char reason[256];
	int code;
	int64_t at_ms; /* unix time of the decision, ms */
	bool learn;    /* egress.names "learn": the agent also holds a podrecord */
	ng_record_table_vec tables;
	json_t *conf; /* enforced: ADD's stdin (owned) */
	bool refused_file;
};

/* Record <-> JSON. Pure. from_json validates and takes its own refs. */
json_t *ng_decision_to_json(const struct ng_decision *d);
int ng_decision_from_json(const json_t *o, struct ng_decision *d, struct ng_err *err);

/* Writes decisions/<key>.json (or .refused.json) when stateDir exists;
 * a decided ADD also removes the pod's earlier refused record. */
int ng_decision_write(const char *state_dir, const struct ng_decision *d, struct ng_err *err);
/* DEL: removes decisions/<key>.json; the refused record stays. */
void ng_decision_remove(const char *state_dir, const char *key);

/* Reads one record file; d->conf owned by d. */
int ng_decision_read(const char *path, struct ng_decision *d, struct ng_err *err);
void ng_decision_free(struct ng_decision *d);

/* A decision file name: "<key>.json" or "<key>.refused.json"; the key
 * into `key`. false for anything else (temp files, strangers). */
bool ng_decision_name(const char *name, char *key, size_t len, bool *refused);

#endif
