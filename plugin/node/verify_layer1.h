/* verify: Layer one: an exec'd process has a network namespace of its own. */
#ifndef NG_VERIFY_LAYER1_H
#define NG_VERIFY_LAYER1_H

#include "node/verify_report.h"

/* From the node: --process's namespace (layer one). */
void ng_verify_layer1(struct run *r);

#endif
