#include "node/verify_report.h"

#include <stdarg.h>
#include <stdlib.h>

static const char *verdict_name(enum ng_verdict v)
{
	static const char *const names[] = {"PASS", "FAIL", "AMBIGUOUS", "SKIP", "INFO"};

	return names[v];
}

void ng_vrow(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

void ng_vrow(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
{
	struct row x = {.verdict = v, .ms = ms};
	va_list ap;

	snprintf(x.check, sizeof(x.check), "%s", check);
	va_start(ap, fmt);
	vsnprintf(x.detail, sizeof(x.detail), fmt, ap);
	va_end(ap);
	if (ng_vec_push(&r->rows, &x) < 0)
		abort(); /* a CLI out of memory has nothing better to do */
}

int ng_verify_print(const struct run *r, FILE *out)
{
	bool ok = true;

	for (size_t i = 0; i < r->rows.n; i++)
		ok &= r->rows.v[i].verdict != NG_FAIL && r->rows.v[i].verdict != NG_AMBIGUOUS;
	if (r->o->json) {
		json_t *o = json_object(), *rows = json_array();

		json_object_set_new(o, "netns", json_string(r->target));
		if (r->pod[0])
			json_object_set_new(o, "pod", json_string(r->pod));
		json_object_set_new(o, "ok", json_boolean(ok));
		for (size_t i = 0; i < r->rows.n; i++) {
			const struct row *x = &r->rows.v[i];
			json_t *j = json_object();

			json_object_set_new(j, "check", json_string(x->check));
			json_object_set_new(j, "verdict", json_string(verdict_name(x->verdict)));
			json_object_set_new(j, "detail", json_string(x->detail));
			if (x->ms >= 0)
				json_object_set_new(j, "ms", json_real(x->ms));
			json_array_append_new(rows, j);
		}
		json_object_set_new(o, "rows", rows);
		json_dumpf(o, out, JSON_INDENT(2));
		fputc('\n', out);
		json_decref(o);
	} else {
		fprintf(out, "boxxkite-netguard verify: netns %s%s%s\n\n", r->target,
			r->pod[0] ? ", pod " : "", r->pod);
		fprintf(out, "%-40s %-10s %s\n", "CHECK", "VERDICT", "DETAIL");
		for (size_t i = 0; i < r->rows.n; i++)
			fprintf(out, "%-40s %-10s %s\n", r->rows.v[i].check,
				verdict_name(r->rows.v[i].verdict), r->rows.v[i].detail);
		fprintf(out, "\n%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
	}
	return ok ? 0 : 1;
}
