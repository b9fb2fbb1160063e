/* The end of every invocation: what it leaves in stateDir for the node
 * agent's /metrics and for `boxxkite-netguard status` (the decision record
 * of ADD, its removal at DEL, one invocation line). Cheap by design: one
 * small file write + rename for ADD, one unlink for DEL, one O_APPEND write
 * for all; nothing at all when stateDir does not exist. Failures are
 * ignored: metrics never fail a pod. */
#ifndef NG_HANDOFF_H
#define NG_HANDOFF_H

#include <jansson.h>
#include <stdbool.h>

#include "base/decision_log.h"
#include "cni/podrecord.h"

struct ng_handoff {
	const char *state_dir; /* NULL: the plugin entry's stateDir or the default */
	const json_t *root;    /* stdin, for stateDir when the config was refused */
	const char *verb;
	const char *container_id, *ifname, *netns;
	const char *pod_namespace, *pod_name;
	const struct ng_log *log; /* decision, reason, code, start */
	/* ADD that enforced: */
	const json_t *conf;
	const ng_record_table_vec *tables;
	bool learn;
};

void ng_handoff(const struct ng_handoff *h);

/* DEL, before anything is removed: the decision record goes first, so the
 * agent's drift watch stops watching the pod before its table is deleted
 * (it would take the deletion for drift, and repair it). */
void ng_handoff_forget(const struct ng_handoff *h);

#endif
