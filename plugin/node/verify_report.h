/* verify's run (what was asked, what was found) and its rows, one per
 * check, shared by the files that make the checks, one file per kind:
 * verify_config.c (which entry and annotations), verify_table.c (the table
 * against the policy), verify_probes.c (live probes from inside the pod),
 * verify_layer1.c (an exec's own namespace), verify_caps.c (who in the
 * namespace could get around the ruleset). This file's source prints them. */
#ifndef NG_VERIFY_REPORT_H
#define NG_VERIFY_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/vec.h"
#include "node/verify.h"
#include "policy/annotations.h"
#include "policy/config.h"
#include "policy/policy.h"

struct row {
	char check[96];
	enum ng_verdict verdict;
	char detail[400];
	double ms; /* < 0: not timed */
};

struct run {
	const struct ng_verify_opts *o;
	NG_VEC(struct row) rows;
	char target[4096];
	char pod[256]; /* "ns/name" from the table comment */
	struct ng_config cfg;
	bool have_cfg;
	char cfg_path[4096];
	json_t *cfg_json;
	struct ng_annotations ann;
	/* From the table check, for the host side's (verify_host.c): the
	 * attachment the pod's table records, and the policy it compiles to. */
	char container_id[256], ifname[16];
	struct ng_policy policy;
	bool have_policy;
};

/* Appends a row (aborts when out of memory: a CLI has nothing better to do). */
void ng_vrow(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Prints the rows; returns the exit status (0 all passed, 1 otherwise). */
int ng_verify_print(const struct run *r, FILE *out);

#endif
