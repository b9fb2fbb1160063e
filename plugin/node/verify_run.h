/* verify's insides, shared by its files: the run (what was asked, what
 * was found), one row per check, and the checks themselves, one file per
 * kind: verify_config.c (which entry and annotations), verify_table.c (the
 * table against the policy), verify_probes.c (live probes from inside the
 * pod), verify_layer1.c (an exec's own namespace), verify_caps.c (who in
 * the namespace could get around the ruleset), verify_report.c (output). */
#ifndef NG_VERIFY_RUN_H
#define NG_VERIFY_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/vec.h"
#include "kernel/netinfo.h"
#include "kernel/nl.h"
#include "node/verify.h"
#include "policy/annotations.h"
#include "policy/config.h"

#define METADATA_PORT 80

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
};

/* Appends a row (aborts when out of memory: a CLI has nothing better to do). */
void ng_vrow(struct run *r, const char *check, enum ng_verdict v, double ms, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* --config (or the node's active conflist when it holds our entry) and
 * --annotations; 0, or -1 after a FAIL row. */
int ng_verify_load_config(struct run *r);
/* Inside the pod's namespace: the table, and the policy comparison. */
void ng_verify_table(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni);
/* Inside the pod's namespace: probes and counters. */
void ng_verify_probe_metadata(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni);
void ng_verify_probe_dns(struct run *r);
void ng_verify_probe_denied(struct run *r);
void ng_verify_counters(struct run *r, struct ng_nl *nl);
/* From the node: --process's namespace (layer one). */
void ng_verify_layer1(struct run *r);
/* From the node: the processes of the pod's namespace (`ns`). */
void ng_verify_capabilities(struct run *r, const struct stat *ns);
/* Prints the rows; returns the exit status (0 all passed, 1 otherwise). */
int ng_verify_print(const struct run *r, FILE *out);

#endif
