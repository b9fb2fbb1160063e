/* The end of every invocation: what it leaves in stateDir for the node
 * agent and for `boxxkite-netguard status` (the pod record of ADD, its
 * removal at DEL, one invocation line). Cheap by design: one small file
 * write + rename for ADD, one unlink for DEL, one O_APPEND write for all;
 * nothing at all when stateDir does not exist. Failures are ignored:
 * metrics never fail a pod. */
#ifndef NG_HANDOFF_H
#define NG_HANDOFF_H

#include <jansson.h>

struct ng_handoff {
	const char *state_dir; /* NULL: the plugin entry's stateDir or the default */
	const json_t *root;    /* stdin, for stateDir when the config was refused */
	const char *verb;
	const struct ng_log *log; /* decision, reason, code, start */
	/* ADD: the pod's record (key and pod set; an enforced pod's conf,
	 * tables, link and nonce too); its decision is taken from `log`.
	 * NULL or no key: no pod to name. */
	struct ng_record *record;
};

void ng_handoff(const struct ng_handoff *h);

/* The stateDir an invocation hands off to (see ng_handoff). */
const char *ng_handoff_state_dir(const struct ng_handoff *h);

#endif
