/* One CNI invocation: what it read (environment, stdin, CNI_ARGS,
 * prevResult), what it decided, and how it answers (the result or the
 * error JSON, the decision log). The verbs (cni.c, cni_add.c, cni_del.c,
 * cni_check.c) are built on it. */
#ifndef NG_INV_H
#define NG_INV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/decision_log.h"
#include "base/err.h"
#include "kernel/netns.h"
#include "kernel/nl.h"
#include "policy/config.h"
#include "policy/pod_policy.h"
#include "spec/cni_args.h"
#include "spec/prevresult.h"
#include "state/record.h"

/* Everything one invocation knows; filled step by step, freed once. */
struct inv {
	const char *verb;
	const char *container_id, *netns_path, *ifname;
	json_t *root;
	struct ng_config cfg;
	struct ng_cni_args args;
	struct ng_prev prev;
	struct ng_pod_policy pod; /* the decision and, when enforced, the policy */
	struct ng_log log;
	struct ng_err err;
	FILE *out;
	/* The pod's record (state/record.h): its identity from the
	 * environment once stdin is loaded; ADD fills the rest. */
	struct ng_record record;
	bool recorded;        /* written before the tables ("pending": learn mode) */
	char host_table[256]; /* the attachment's host-side table (nft/render_host.h) */
	/* A pod already recorded (a retried ADD, CHECK): how its live link
	 * differs from the recorded facts it is planned with ("" none). */
	char link_drift[200];
	bool rerun; /* the attachment is recorded (enforced or pending) in this very namespace */
	/* CHECK: the least the pod's record says it keeps (policy/select.h) */
	enum ng_keep keep;
};

void ng_inv_begin(struct inv *v, const char *verb, FILE *out);
void ng_inv_end(struct inv *v);

/* The environment variable, or NULL when unset or empty. */
const char *ng_inv_env(const char *name);
/* Prints the error JSON, logs `decision`, returns the exit status. */
int ng_inv_fail(struct inv *v, const char *decision);
/* CNI_CONTAINERID, CNI_IFNAME, CNI_ARGS and (with `netns`) CNI_NETNS. */
int ng_inv_need_env(struct inv *v, bool netns);
/* stdin: the entry, validated; the record's pod identity. */
int ng_inv_load(struct inv *v, FILE *in);
int ng_inv_load_prev(struct inv *v);
int ng_inv_open_netns(struct inv *v, int *fd, enum ng_netns_status *st);
/* A netfilter socket in the pod's namespace; with `plan`, both sides
 * planned first (cni/hostmirror.h) and the link facts recorded. */
int ng_inv_open_pod_socket(struct inv *v, struct ng_nl *nl, bool plan);
/* Prints prevResult, converted to the config's cniVersion. */
int ng_inv_print_prev(struct inv *v);
/* Prints the result or error JSON `j` on stdout. */
void ng_inv_print_json(FILE *out, json_t *j);
/* The pod's decision and policy (policy/pod_policy.h); returns the exit
 * status of a refusal or error, or 0. */
int ng_inv_decide(struct inv *v, ng_names_fn resolve);

#endif
