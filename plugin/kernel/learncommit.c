#include "kernel/learncommit.h"

#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>

#include "kernel/learnedset.h"
#include "kernel/nlcommit.h"
#include "nft/render.h"

void ng_learned_update_free(struct ng_learned_update *u)
{
	for (int r = 0; r < 2; r++)
		for (int f = 0; f < 2; f++) {
			ng_vec_free(&u->add[r][f]);
			ng_vec_free(&u->refresh[r][f]);
		}
}

/* The messages for one table: per learned set, the refreshed elements
 * deleted (unless `plain`), then every element added. */
static int render_table(const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
			bool plain, struct ng_batch *b)
{
	int rc = 0;

	for (int f = 0; f < 2 && rc == 0; f++)
		for (int r = 0; r < 2 && rc == 0; r++) {
			const struct ng_set_spec *s = &sets[ng_learned_set(f, r != 0)];

			if (!plain && u->refresh[r][f].n)
				rc = ng_set_elems_render(b, s, &u->refresh[r][f], NFT_MSG_DELSETELEM);
			if (rc == 0 && u->add[r][f].n)
				rc = ng_set_elems_render(b, s, &u->add[r][f], NFT_MSG_NEWSETELEM);
		}
	return rc;
}

/* One transaction for the tables of one side, acknowledged before this
 * returns; 0 at once when that side has none. */
static int commit_side(struct ng_nl *nl, bool in_node, const ng_learned_table_vec *tables,
		       const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
		       bool plain, struct ng_err *err)
{
	struct ng_batch b;
	bool any = false;
	int rc = 0;

	for (size_t i = 0; i < tables->n; i++)
		any |= tables->v[i].in_node == in_node;
	if (!any)
		return 0;
	if (!nl)
		return ng_fail(err, NG_E_KERNEL, "no netfilter socket in the %s's namespace",
			       in_node ? "node" : "pod");
	if (ng_nl_batch_init(nl, &b, NG_TABLE, err) < 0)
		return -1;
	for (size_t i = 0; i < tables->n && rc == 0; i++) {
		const struct ng_learned_table *t = &tables->v[i];

		if (t->in_node != in_node)
			continue;
		/* The batch's table and family name what the next messages
		 * are about: one transaction may hold several tables. */
		snprintf(b.table, sizeof(b.table), "%s", t->name);
		b.family = t->family;
		rc = render_table(sets, u, plain, &b);
	}
	if (rc < 0) {
		ng_batch_free(&b);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	rc = ng_batch_finish(&b, err);
	if (rc == 0)
		rc = ng_nl_commit(nl, &b, err);
	ng_batch_free(&b);
	return rc;
}

int ng_learned_commit_side(struct ng_nl *nl, bool in_node, const ng_learned_table_vec *tables,
			   const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
			   struct ng_err *err)
{
	bool refreshes = false;
	int rc = -1;

	for (int r = 0; r < 2; r++)
		for (int f = 0; f < 2; f++)
			refreshes |= u->refresh[r][f].n > 0;
	for (int pass = 0; pass < 2; pass++) {
		rc = commit_side(nl, in_node, tables, sets, u, pass == 1, err);
		/* As below: a plain resend only after a refresh's ENOENT. */
		if (rc == 0 || pass == 1 || !refreshes || !nl || nl->refused_errno != ENOENT)
			break;
	}
	return rc;
}

int ng_learned_commit(struct ng_nl *pod_nl, struct ng_nl *node_nl, const ng_learned_table_vec *tables,
		      const struct ng_set_spec sets[NG_S_COUNT], const struct ng_learned_update *u,
		      struct ng_err *err)
{
	bool refreshes = false;
	int rc = -1;

	for (int r = 0; r < 2; r++)
		for (int f = 0; f < 2; f++)
			refreshes |= u->refresh[r][f].n > 0;
	for (int pass = 0; pass < 2; pass++) {
		bool plain = pass == 1;
		struct ng_nl *failed = pod_nl;

		rc = commit_side(pod_nl, false, tables, sets, u, plain, err);
		if (rc == 0) {
			failed = node_nl;
			rc = commit_side(node_nl, true, tables, sets, u, plain, err);
		}
		/* Only this pass's refusal, on the side that failed (a socket
		 * keeps its last one; a missing socket refused nothing); without
		 * a delete in it, the same batch would only fail again. */
		if (rc == 0 || plain || !refreshes || !failed || failed->refused_errno != ENOENT)
			break;
	}
	return rc;
}
