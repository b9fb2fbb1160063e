/* verify: Who in the pod's namespace could get around the ruleset. */
#ifndef NG_VERIFY_CAPS_H
#define NG_VERIFY_CAPS_H

#include "node/verify_report.h"

/* From the node: the processes of the pod's namespace (`ns`). */
void ng_verify_capabilities(struct run *r, const struct stat *ns);

#endif
