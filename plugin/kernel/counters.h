/* The deny counters of a pod's tables (named counter objects: the inet
 * table's and the netdev guard's raw_denied), read over the netfilter
 * transport: what `verify` and `stats` report. */
#ifndef NG_COUNTERS_H
#define NG_COUNTERS_H

#include <stdint.h>

#include "base/err.h"
#include "kernel/nl.h"
#include "base/vec.h"

struct ng_counter {
	char name[64];
	uint64_t packets, bytes;
};
typedef NG_VEC(struct ng_counter) ng_counter_vec;

/* Returns 0, -ENOENT when the table does not exist, or -1 with err. */
int ng_counters_read(struct ng_nl *nl, const char *table, ng_counter_vec *out, struct ng_err *err);

/* The counter named `name`, or NULL. */
const struct ng_counter *ng_counter_find(const ng_counter_vec *v, const char *name);

#endif
