/* Committing what an answer (or a live connection) taught: one
 * transaction per namespace over the tables the pod's record names,
 * acknowledged before the caller issues any verdict. See agent.h. */
#include "agent/agent.h"

#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>

#include "kernel/nlcommit.h"
#include "nft/render.h"

/* The messages for one table: per learned set, the refreshed elements
 * deleted, then the refreshed and new ones added. */
static int render_table(struct ng_pod *p, const ng_pending_vec *pend, struct ng_batch *b)
{
	ng_elem_vec dels = {0}, adds = {0};
	int rc = 0;

	for (int f = 0; f < 2 && rc == 0; f++)
		for (int ranged = 0; ranged < 2 && rc == 0; ranged++) {
			const struct ng_set_spec *s = &p->sets[(ranged ? NG_S_TTL4 : NG_S_NAMES4) + f];

			dels.n = adds.n = 0;
			for (size_t i = 0; i < pend->n && rc == 0; i++) {
				const struct ng_pending *q = &pend->v[i];

				if (q->ranged != (ranged != 0) || NG_FAM_IDX(q->e.lo.fam) != f)
					continue;
				if ((q->refresh && ng_vec_push(&dels, &q->e) < 0) ||
				    ng_vec_push(&adds, &q->e) < 0)
					rc = -1;
			}
			if (rc == 0 && dels.n)
				rc = ng_set_elems_render(b, s, &dels, NFT_MSG_DELSETELEM);
			if (rc == 0 && adds.n)
				rc = ng_set_elems_render(b, s, &adds, NFT_MSG_NEWSETELEM);
		}
	ng_vec_free(&dels);
	ng_vec_free(&adds);
	return rc;
}

/* One transaction for the tables of one namespace (the pod's, or the
 * node's), acknowledged before this returns. */
static int commit_ns(struct ng_pod *p, struct ng_nl *nl, bool in_node, const ng_pending_vec *pend,
		     struct ng_err *err)
{
	struct ng_batch b;
	bool any = false;
	int rc;

	if (ng_nl_batch_init(nl, &b, NG_TABLE, err) < 0)
		return -1;
	rc = 0;
	for (size_t i = 0; i < p->tables.n && rc == 0; i++) {
		const struct ng_record_table *t = &p->tables.v[i];

		if (t->in_node != in_node)
			continue;
		snprintf(b.table, sizeof(b.table), "%s", t->name);
		b.family = t->family;
		rc = render_table(p, pend, &b);
		any = true;
	}
	if (rc < 0) {
		ng_batch_free(&b);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	if (!any) {
		ng_batch_free(&b);
		return 0;
	}
	rc = ng_batch_finish(&b, err);
	if (rc == 0)
		rc = ng_nl_commit(nl, &b, err);
	ng_batch_free(&b);
	return rc;
}

/* Commits a->pending to every table of the pod; 0 when every namespace
 * acknowledged. A refresh deletes before it adds (re-adding alone does not
 * move an expiry); when the element has just expired the delete fails with
 * ENOENT, and the whole transaction is sent again as plain adds. */
int ng_pod_commit(struct ng_agent *a, struct ng_pod *p)
{
	struct ng_err err = {0};
	bool node = false;
	int rc = 0;

	if (a->pending.n == 0)
		return 0;
	for (size_t i = 0; i < p->tables.n; i++)
		node |= p->tables.v[i].in_node;
	for (int pass = 0; pass < 2; pass++) {
		bool node_ran = false, enoent;

		rc = commit_ns(p, &p->nl, false, &a->pending, &err);
		if (rc == 0 && node) {
			node_ran = a->node_nl_open;
			rc = a->node_nl_open ? commit_ns(p, &a->node_nl, true, &a->pending, &err)
					     : ng_fail(&err, NG_E_KERNEL,
						       "no netfilter socket in the node's namespace");
		}
		/* Only this pass's refusals (a socket keeps its last one). */
		enoent = rc < 0 && (node_ran ? a->node_nl.refused_errno : p->nl.refused_errno) == ENOENT;
		if (rc == 0 || pass == 1 || !enoent)
			break;
		for (size_t i = 0; i < a->pending.n; i++)
			a->pending.v[i].refresh = false;
	}
	if (rc < 0) {
		p->c.commit_errors++;
		ng_alog("error", "commit_failed", p, "%s", err.msg);
		ng_tracker_revert(&p->tr, &a->pending);
		return -1;
	}
	p->c.commits++;
	p->c.learned += a->pending.n;
	return 0;
}
