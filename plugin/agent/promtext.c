#include "agent/promtext.h"

#include <inttypes.h>

void ng_prom_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s ", name);
	/* HELP text escapes backslash and newline. */
	for (const char *p = help; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

void ng_prom_escape(FILE *out, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\')
			fputs("\\\\", out);
		else if (*v == '"')
			fputs("\\\"", out);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void labels(FILE *out, const struct ng_prom_labels *l, const char *le)
{
	int n = 0;

	if ((!l || !l->kv[0]) && !le)
		return;
	fputc('{', out);
	for (int i = 0; l && i + 1 < 16 && l->kv[i]; i += 2) {
		fprintf(out, "%s%s=\"", n++ ? "," : "", l->kv[i]);
		ng_prom_escape(out, l->kv[i + 1]);
		fputc('"', out);
	}
	if (le)
		fprintf(out, "%sle=\"%s\"", n ? "," : "", le);
	fputc('}', out);
}

void ng_prom_u64(FILE *out, const char *name, const struct ng_prom_labels *l, uint64_t v)
{
	fputs(name, out);
	labels(out, l, NULL);
	fprintf(out, " %" PRIu64 "\n", v);
}

void ng_prom_double(FILE *out, const char *name, const struct ng_prom_labels *l, double v)
{
	fputs(name, out);
	labels(out, l, NULL);
	fprintf(out, " %.6f\n", v);
}

void ng_prom_hist(FILE *out, const char *name, const struct ng_prom_labels *l, const struct ng_hist *h)
{
	char le[32];

	for (int i = 0; i < NG_HIST_BUCKETS; i++) {
		snprintf(le, sizeof(le), "%g", (double)ng_hist_bounds_us[i] / 1e6);
		fprintf(out, "%s_bucket", name);
		labels(out, l, le);
		fprintf(out, " %" PRIu64 "\n", ng_hist_cumulative(h, i));
	}
	fprintf(out, "%s_bucket", name);
	labels(out, l, "+Inf");
	fprintf(out, " %" PRIu64 "\n", h->count);
	fprintf(out, "%s_sum", name);
	labels(out, l, NULL);
	fprintf(out, " %.6f\n", (double)h->sum_us / 1e6);
	fprintf(out, "%s_count", name);
	labels(out, l, NULL);
	fprintf(out, " %" PRIu64 "\n", h->count);
}
