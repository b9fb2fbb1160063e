/* The agent's commit of what a pod's answers (or its live connections)
 * taught: elements added to, or refreshed in, the pod's learned name sets
 * in every table that holds them, one acknowledged transaction per
 * namespace (the pod's first, then the node's), before the answer is let
 * through.
 *
 * A refresh deletes the element before it adds it again, in the same
 * transaction: re-adding an element alone does not move its expiry. When
 * the element has just expired (or a repair replaced the table with empty
 * sets) the delete fails with ENOENT and the kernel refuses the whole
 * transaction; it is then sent once more as plain adds, in every
 * namespace. */
#ifndef NG_LEARNCOMMIT_H
#define NG_LEARNCOMMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "base/vec.h"
#include "kernel/nl.h"
#include "nft/render_objs.h"
#include "nft/render_sets.h"
#include "policy/policy.h"

/* A table that holds the pod's learned sets (the pod's inet table and
 * packet-socket guard, the host-side table in the node's namespace). */
struct ng_learned_table {
	bool in_node;   /* in the node's namespace, else the pod's */
	uint8_t family; /* NFPROTO_INET / NFPROTO_NETDEV */
	char name[256];
};
typedef NG_VEC(struct ng_learned_table) ng_learned_table_vec;

/* One commit, per learned set ([ranged][family index]: names_vX and
 * names_vX_ranges): every element to add, with its timeout, and those of them
 * to delete first (the refreshes). */
struct ng_learned_update {
	ng_elem_vec add[2][2];
	ng_elem_vec refresh[2][2];
};
void ng_learned_update_free(struct ng_learned_update *u);

/* Commits `u` to `tables` (their sets are `sets`, ng_render_set_specs of
 * the pod's policy): those in the pod's namespace over `pod_nl`, then
 * those in the node's over `node_nl` (NULL when none could be opened: an
 * error when a table is there). 0 when every namespace acknowledged; -1
 * with err otherwise (a namespace that acknowledged before the failure
 * keeps what it took: its elements time out on their own). */
int ng_learned_commit(struct ng_nl *pod_nl, struct ng_nl *node_nl, const ng_learned_table_vec *tables,
		      const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
		      struct ng_err *err);

/* The same for one side only: the tables with in_node == `in_node`, over
 * `nl` (the pod's or the node's socket). The learner commits the node side
 * only what the node itself saw (agent/nodeseen.h). */
int ng_learned_commit_side(struct ng_nl *nl, bool in_node, const ng_learned_table_vec *tables,
			   const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
			   struct ng_err *err);

#endif
