/* Rewriting one set's elements into disjoint intervals, as the kernel's
 * interval sets require (overlaps are refused with EEXIST). Pure. */
#ifndef NG_NORMALIZE_H
#define NG_NORMALIZE_H

#include "policy/policy.h"

/* Rewrites `v` (one family, one set) into disjoint elements covering the
 * same union; where inputs overlap, the longer timeout wins. Needed because
 * the kernel's interval sets refuse overlapping elements. 0 or -1 (ENOMEM). */
int ng_elems_normalize(ng_elem_vec *v);

#endif
