/* The Prometheus text exposition format (version 0.0.4), written so that
 * one scrape of the whole node is valid: each family's HELP and TYPE once,
 * then all its samples; label values escaped (backslash, quote, newline).
 * Writes to a stdio stream (open_memstream for an HTTP answer). Pure. */
#ifndef NG_PROMTEXT_H
#define NG_PROMTEXT_H

#include <stdint.h>
#include <stdio.h>

#include "base/histogram.h"

/* Label pairs: keys and values alternate, NULL-terminated. */
struct ng_prom_labels {
	const char *kv[16];
};

/* "# HELP name help\n# TYPE name type\n" */
void ng_prom_family(FILE *out, const char *name, const char *type, const char *help);
/* name{labels} value */
void ng_prom_u64(FILE *out, const char *name, const struct ng_prom_labels *l, uint64_t v);
void ng_prom_double(FILE *out, const char *name, const struct ng_prom_labels *l, double v);
/* name_bucket{labels,le=...}, name_sum, name_count, in seconds. */
void ng_prom_hist(FILE *out, const char *name, const struct ng_prom_labels *l, const struct ng_hist *h);
/* A label value as the format escapes it. */
void ng_prom_escape(FILE *out, const char *v);

#endif
