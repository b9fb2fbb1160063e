/* The policy generation: which plugin entry the node's pods are planned
 * from (live policy, agent/livepolicy.h). The agent numbers every new
 * entry it reads from the active conflist and keeps the current one in
 * stateDir/policy.json:
 *
 *   {"generation": N, "file": "/etc/cni/net.d/10-x.conflist", "at": ms,
 *    "entry": {...our entry as libcni passes it, without the per-pod keys}}
 *
 * ADD stamps its record with N when its own entry is that one (the
 * runtime may have read the file before or after the agent did: a record
 * of another entry is re-planned by the agent); the agent stamps every
 * pod it re-plans. Written with a temp file + rename, like the records. */
#ifndef NG_POLICYGEN_H
#define NG_POLICYGEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define NG_POLICY_FILE "policy.json"

struct ng_policygen {
	uint64_t gen; /* 0: none yet */
	int64_t at_ms;
	char file[4096];
	json_t *entry; /* owned */
};

/* 0 read, 1 there is none, -1 with err (unreadable or malformed). */
int ng_policygen_read(const char *state_dir, struct ng_policygen *pg, struct ng_err *err);
int ng_policygen_write(const char *state_dir, const struct ng_policygen *pg, struct ng_err *err);
void ng_policygen_free(struct ng_policygen *pg);

/* The entry part of a plugin's stdin: everything the conflist gives (our
 * entry, the list's name and cniVersion), without what the runtime adds
 * per pod (prevResult, runtimeConfig). A new reference; NULL out of
 * memory. Pure. */
json_t *ng_entry_of(const json_t *conf);
/* Is the entry part of stdin `conf` exactly `entry` (ng_entry_of's shape)?
 * Key order and formatting aside, value for value. Pure. */
bool ng_entry_is(const json_t *conf, const json_t *entry);
/* What differs from entry `a` to entry `b`, for the log: the keys, one
 * level into objects ("egress.allow, dns.servers"); "" when nothing. Pure. */
void ng_entry_changes(const json_t *a, const json_t *b, char *buf, size_t len);

/* ADD's stamp: the current generation when `conf`'s entry is the one in
 * stateDir/policy.json, else 0 (none, unreadable, or another entry). */
uint64_t ng_policygen_stamp(const char *state_dir, const json_t *conf);

#endif
