/* Building DNS messages byte by byte for the parser's and the learner's
 * tests (test/unit/policy/test_dnsparse.c, test_learn.c). */
#ifndef TU_DNSMSG_H
#define TU_DNSMSG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tu_dns {
	uint8_t b[70000];
	size_t n;
};

static inline void tu_put(struct tu_dns *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static inline void tu_put16(struct tu_dns *m, unsigned v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	tu_put(m, x, 2);
}

static inline void tu_put32(struct tu_dns *m, uint32_t v)
{
	tu_put16(m, v >> 16);
	tu_put16(m, v & 0xffff);
}

/* "a.b.c" in wire form, uncompressed; returns its offset. */
static inline size_t tu_name(struct tu_dns *m, const char *s)
{
	size_t at = m->n;

	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		uint8_t lb = (uint8_t)l;

		tu_put(m, &lb, 1);
		tu_put(m, s, l);
		s += l + (dot ? 1 : 0);
	}
	tu_put(m, "", 1);
	return at;
}

/* A compression pointer to `off`. */
static inline void tu_ptr(struct tu_dns *m, size_t off)
{
	tu_put16(m, 0xc000 | (unsigned)off);
}

#endif
