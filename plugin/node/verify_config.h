/* verify: Which entry and annotations verify compares with. */
#ifndef NG_VERIFY_CONFIG_H
#define NG_VERIFY_CONFIG_H

#include "node/verify_report.h"

/* --config (or the node's active conflist when it holds our entry) and
 * --annotations; 0, or -1 after a FAIL row. */
int ng_verify_load_config(struct run *r);

#endif
