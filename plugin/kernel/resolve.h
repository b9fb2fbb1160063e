/* Resolution of DNS names in egress.allow and grants, at ADD, through the
 * node's resolver (/etc/resolv.conf of the namespace the plugin runs in),
 * A and AAAA with TTLs. A name with no address is an error (code 11): the
 * runtime retries, and the pod never starts with a silently missing
 * destination. */
#ifndef NG_RESOLVE_H
#define NG_RESOLVE_H

#include "base/err.h"
#include "policy/policy.h"

/* All names of one ADD share this much time. A pod may grant up to 256
 * names; a node resolver that answers A but drops AAAA (each name then
 * costs the AAAA query's timeouts, 4 s or more) would otherwise hold pod
 * start for many minutes. Past the budget ADD fails with code 11 and the
 * runtime retries. */
#define NG_RESOLVE_BUDGET_MS 10000

/* A resolver: fills `out` (name already set) for one name, giving up
 * after about `budget_ms` (it may overrun by one query's timeout).
 * Replaceable so policy tests run without a network. */
typedef int (*ng_resolver_fn)(const char *name, long budget_ms, struct ng_resolved_name *out,
			      struct ng_err *err);

int ng_resolve_system(const char *name, long budget_ms, struct ng_resolved_name *out, struct ng_err *err);

/* Resolves every name in `names` with `fn`, within `budget_ms` in all. */
int ng_resolve_all(const ng_name_list *names, ng_resolver_fn fn, long budget_ms, ng_resolved *out,
		   struct ng_err *err);

#endif
