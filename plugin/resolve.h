/* Resolution of DNS names in egress.allow and grants, at ADD, through the
 * node's resolver (/etc/resolv.conf of the namespace the plugin runs in),
 * A and AAAA with TTLs. A name with no address is an error (code 11): the
 * runtime retries, and the pod never starts with a silently missing
 * destination. */
#ifndef NG_RESOLVE_H
#define NG_RESOLVE_H

#include "err.h"
#include "policy.h"

/* A resolver: fills `out` (name already set) for one name. Replaceable so
 * policy tests run without a network. */
typedef int (*ng_resolver_fn)(const char *name, struct ng_resolved_name *out, struct ng_err *err);

int ng_resolve_system(const char *name, struct ng_resolved_name *out, struct ng_err *err);

/* Resolves every name in `names` with `fn`. */
int ng_resolve_all(const ng_name_list *names, ng_resolver_fn fn, ng_resolved *out, struct ng_err *err);

#endif
