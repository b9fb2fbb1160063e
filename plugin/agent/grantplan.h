/* The pure half of a grant change (agent/grants.h applies it): a pod's
 * recorded ADD stdin with its grant annotation set to what the API now
 * says (everything else as ADD recorded it: the enforce annotation, the
 * config, prevResult) and the grants a change withdraws (which live
 * flows go: policy/admits.h, as for any re-plan). The candidate record goes through the one
 * path of ADD (state/recpolicy.h), so a grant is refused exactly as ADD
 * would refuse it. The annotation in and out of a record: state/recgrants.h. */
#ifndef NG_AGENT_GRANTPLAN_H
#define NG_AGENT_GRANTPLAN_H

#include <stdbool.h>

#include "policy/dest.h"

/* Do the two annotation values grant the same? (NULL and NULL: yes.) */
bool ng_grantplan_same(const char *a, const char *b);

/* The grants of `old` that no grant of `now` covers, into *out (copies). */
int ng_grantplan_removed(const ng_dest_vec *old, const ng_dest_vec *now, ng_dest_vec *out);

/* "a, b, c" of the grants' texts into buf ("none" when empty). */
void ng_grantplan_list(const ng_dest_vec *v, char *buf, size_t len);

#endif
