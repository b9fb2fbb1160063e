/* /readyz: the node is protected only when all of these hold, so the
 * DaemonSet goes ready (and a rolling update moves on) only then:
 *
 *   binary    <cni-bin-dir>/boxxkite-netguard is a regular executable file
 *             with the same bytes as the running agent (an update is not
 *             ready until the installer copied the new binary)
 *   conflist  the active config of <cni-conf-dir> (the file the runtime
 *             reads: cni/confdir.h) holds our entry, and it parses as a
 *             valid plugin configuration
 *   agent     the agent has picked up every recorded pod and serves
 *   policy    live policy (agent/livepolicy.h): the active entry is
 *             followed (a refused or missing one fails, naming why: the
 *             running pods keep their generation) and no pod's re-plan
 *             onto it failed
 *
 * Reading the binaries is cached by (inode, size, mtime) of both files. */
#ifndef NG_READYZ_H
#define NG_READYZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "node/nodeview.h"

#define NG_DEFAULT_CNI_BIN_DIR "/opt/cni/bin"

struct ng_readyz {
	char bin_dir[4096], conf_dir[4096];
	/* cache of the last binary comparison */
	uint64_t key[6];
	bool same;
};

/* Fills r->binary/conflist (+ messages); serving is the caller's. */
void ng_readyz_eval(struct ng_readyz *z, struct ng_ready *r);

/* The /readyz body, one line per check; true when all passed. Pure. */
bool ng_readyz_render(const struct ng_ready *r, FILE *out);

#endif
