/* Fuzz target: set normalisation. Every 9 input bytes are a box (address
 * range in 10.0.0.x, protocol, port range, timeout); the output must be
 * pairwise disjoint and cover exactly the same points. */
#include <stddef.h>
#include <stdint.h>

#include "policy/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t hits(const ng_elem_vec *v, uint8_t proto, uint8_t a, uint16_t p, uint32_t *timeout)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++) {
		const struct ng_elem *e = &v->v[i];

		if (e->proto == proto && e->lo.a[3] <= a && a <= e->hi.a[3] && e->p_lo <= p && p <= e->p_hi) {
			n++;
			if (e->timeout > *timeout)
				*timeout = e->timeout;
		}
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ng_elem_vec in = {0}, out = {0};

	for (size_t i = 0; i + 9 <= size && in.n < 12; i += 9) {
		const uint8_t *b = data + i;
		uint8_t lo = b[0] % 32, hi = (uint8_t)(lo + b[1] % 8);
		uint16_t plo = (uint16_t)(b[3] % 24), phi = (uint16_t)(plo + b[4] % 6);
		struct ng_elem e = {.proto = b[2] & 1 ? 6 : 17,
				    .p_lo = plo,
				    .p_hi = phi,
				    .timeout = b[5] % 3 ? 0 : (uint32_t)b[6] * 10};

		e.lo.fam = e.hi.fam = NG_V4;
		e.lo.a[0] = e.hi.a[0] = 10;
		e.lo.a[3] = lo;
		e.hi.a[3] = hi;
		ng_vec_push(&in, &e);
		ng_vec_push(&out, &e);
	}
	if (ng_elems_normalize(&out) != 0)
		__builtin_trap();
	for (int proto = 6; proto <= 17; proto += 11)
		for (unsigned a = 0; a < 40; a++)
			for (unsigned p = 0; p < 30; p++) {
				uint32_t tin = 0, tout = 0;
				size_t hin = hits(&in, (uint8_t)proto, (uint8_t)a, (uint16_t)p, &tin);
				size_t hout = hits(&out, (uint8_t)proto, (uint8_t)a, (uint16_t)p, &tout);

				/* Same coverage, never overlapping, exactly the longest life. */
				if ((hin > 0) != (hout > 0) || hout > 1 || tout != tin)
					__builtin_trap();
			}
	ng_vec_free(&in);
	ng_vec_free(&out);
	return 0;
}
