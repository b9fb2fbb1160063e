/* A growable array, the only container the plugin needs. */
#ifndef NG_VEC_H
#define NG_VEC_H

#include <stdlib.h>
#include <string.h> // IWYU pragma: keep (ng_vec_push expands to memcpy)

#define NG_VEC(type)        \
	struct {            \
		type *v;    \
		size_t n;   \
		size_t cap; \
	}

/* Makes room for one more element; returns 0, or -1 when out of memory. */
static inline int ng_vec_reserve_(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap > ((size_t)-1) / size)
		return -1;
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -1;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* Appends a copy of *(elem); evaluates to 0 or -1. */
#define ng_vec_push(vec, elem)                                                         \
	(ng_vec_reserve_((void **)&(vec)->v, &(vec)->cap, (vec)->n, sizeof(*(vec)->v)) \
		 ? -1                                                                  \
		 : (memcpy(&(vec)->v[(vec)->n++], (elem), sizeof(*(vec)->v)), 0))

#define ng_vec_free(vec)         \
	do {                     \
		free((vec)->v);  \
		(vec)->v = NULL; \
		(vec)->n = 0;    \
		(vec)->cap = 0;  \
	} while (0)

#endif
