/* One CNI invocation, shared by the files that carry out its verbs
 * (cni.c: input, output and the verbs without a ruleset change; cni_add.c:
 * ADD; cni_del_check.c: DEL and CHECK). Private to cni/. */
#ifndef NG_INV_H
#define NG_INV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/decision_log.h"
#include "base/err.h"
#include "cni/cni_args.h"
#include "cni/podrecord.h"
#include "cni/prevresult.h"
#include "kernel/netns.h"
#include "kernel/nl.h"
#include "policy/config.h"
#include "policy/pod_policy.h"

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
	struct ng_podrecord record; /* egress.names "learn" (conf borrowed from root) */
	bool recorded;
	char host_table[256]; /* the attachment's host-side table (nft/render_host.h) */
};

/* The environment variable, or NULL when unset or empty. */
const char *ng_inv_env(const char *name);
/* Prints the error JSON, logs `decision`, returns the exit status. */
int ng_inv_fail(struct inv *v, const char *decision);
/* CNI_CONTAINERID, CNI_IFNAME, CNI_ARGS and (with `netns`) CNI_NETNS. */
int ng_inv_need_env(struct inv *v, bool netns);
/* stdin: the entry, validated. */
int ng_inv_load(struct inv *v, FILE *in);
int ng_inv_load_prev(struct inv *v);
struct ng_pod_id ng_inv_pod_id(const struct inv *v);
int ng_inv_open_netns(struct inv *v, int *fd, enum ng_netns_status *st);
/* A netfilter socket in the pod's namespace; with `plan`, both sides
 * planned first (cni/hostmirror.h). */
int ng_inv_open_pod_socket(struct inv *v, struct ng_nl *nl, bool plan);
/* The host-side table, in the node's namespace, when the pod has one. */
int ng_inv_push_host_table(const struct inv *v, ng_record_table_vec *tables);
int ng_inv_print_prev(struct inv *v);
/* The pod's decision and policy (policy/pod_policy.h); returns the exit
 * status of a refusal or error, or 0. */
int ng_inv_decide(struct inv *v, ng_names_fn resolve);

int ng_cmd_add(struct inv *v, FILE *in);
int ng_cmd_del(struct inv *v, FILE *in);
int ng_cmd_check(struct inv *v, FILE *in);

#endif
