#include "node/podstate.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/counters.h"
#include "kernel/learnedset.h"
#include "kernel/netns.h"
#include "kernel/peer.h"
#include "kernel/nl_netns.h"
#include "kernel/podtables.h"
#include "kernel/resolve.h"
#include "kernel/ruleset.h"
#include "nft/render.h"
#include "nft/render_log.h"
#include "nft/render_objs.h"
#include "state/recpolicy.h"

/* Repair of a "resolve" pod: the node's DNS, as ADD asked it. */
static int resolve_names(const ng_name_list *names, ng_resolved *out, void *ctx, struct ng_err *err)
{
	(void)ctx;
	return ng_resolve_all(names, ng_resolve_system, NG_RESOLVE_BUDGET_MS, out, err);
}

int ng_podstate_rebuild(const struct ng_record *r, struct ng_recpolicy *rp, struct ng_err *err)
{
	/* Both sides, as ADD made them, from the record alone: its stdin and
	 * the link facts ADD planned with, never the pod's present. */
	return ng_recpolicy_build(r, resolve_names, NULL, rp, err);
}

int ng_podstate_link(const struct ng_record *r, struct ng_link_facts *live, struct ng_err *err)
{
	char why[256];
	int fd, rc = ng_netns_open_pod(&r->pod, &fd, err);

	if (rc != 0)
		return rc;
	rc = ng_peer_find(fd, r->pod.ifname, live, why, sizeof(why), err);
	close(fd);
	return rc;
}

int ng_podstate_open(const struct ng_record *r, struct ng_nl *nl, struct ng_err *err)
{
	int fd, rc = ng_netns_open_pod(&r->pod, &fd, err);

	if (rc != 0)
		return rc;
	rc = ng_nl_open_netns(fd, NULL, nl, err);
	close(fd);
	return rc;
}

void ng_podstate_from_record(const struct ng_record *d, struct ng_view_pod *v)
{
	snprintf(v->key, sizeof(v->key), "%s", d->key);
	snprintf(v->ns, sizeof(v->ns), "%s", d->pod.ns);
	snprintf(v->name, sizeof(v->name), "%s", d->pod.name);
	snprintf(v->container, sizeof(v->container), "%.128s", d->pod.container_id);
	snprintf(v->decision, sizeof(v->decision), "%s", d->decision);
	snprintf(v->reason, sizeof(v->reason), "%s", d->reason);
	v->code = d->code;
	v->at_ms = d->at_ms;
	v->learn = d->learn;
	v->audit = d->audit;
	v->refused_file = d->refused_file;
	v->generation = d->generation;
	v->kept = d->keep != NG_KEEP_NONE;
	for (size_t i = 0; i < d->tables.n; i++)
		v->has_node_side |= d->tables.v[i].in_node;
}

/* The counters of one table; false when it is not there. */
static bool read_counters(struct ng_nl *nl, const struct ng_record_table *t, struct ng_view_pod *v)
{
	ng_counter_vec c = {0};
	struct ng_err err = {0};
	bool any = false;

	if (ng_counters_read(nl, t->name, &c, &err) != 0) {
		ng_vec_free(&c);
		return false;
	}
	/* ng_counters_read lists every family's counters of that table name:
	 * the guard's counter is raw_denied, the inet table's the others. */
	for (size_t i = 0; i < c.n; i++) {
		bool raw = strncmp(c.v[i].name, "raw", 3) == 0;
		struct ng_view_counter vc = {.in_node = t->in_node, .netdev = t->family == NFPROTO_NETDEV};

		if ((!t->in_node && raw != (t->family == NFPROTO_NETDEV)) ||
		    ng_counter_is_log_skipped(c.v[i].name))
			continue;
		snprintf(vc.table, sizeof(vc.table), "%s", t->name);
		ng_counter_category(c.v[i].name, vc.category, sizeof(vc.category), &vc.would_deny);
		vc.packets = c.v[i].packets;
		vc.bytes = c.v[i].bytes;
		if (ng_vec_push(&v->counters, &vc) == 0)
			any = true;
	}
	ng_vec_free(&c);
	return any;
}

/* Addresses kept per name entry to count the distinct ones (a view, not
 * a copy: a table holding more counts no further). */
#define SEEN_MAX 16384

struct learned_ctx {
	const struct ng_set_spec *spec;
	const struct ng_policy *pol;
	struct ng_view_pod *v;
	int fam;
	/* every address per name entry, counted distinct at the end */
	NG_VEC(struct ng_ip) seen[32];
};

static void learned_one(const struct ng_elem *el, uint64_t left, void *data)
{
	struct learned_ctx *c = data;

	(void)left;
	c->v->learned[c->fam]++;
	for (size_t k = 0; k < c->pol->name_entries.n && k < 32; k++) {
		const struct ng_name_entry *ne = &c->pol->name_entries.v[k];

		if (ne->proto != el->proto || el->p_lo < ne->p_lo || el->p_hi > ne->p_hi)
			continue;
		if (c->seen[k].n < SEEN_MAX && ng_vec_push(&c->seen[k], &el->lo) < 0)
			return;
	}
}

static int ip_order(const void *a, const void *b)
{
	return ng_ip_cmp(a, b);
}

/* Distinct addresses, sorted: linear after the sort (a pod holding
 * thousands of learned elements must not cost the ops thread a quadratic
 * walk every collection). */
static unsigned distinct(struct ng_ip *v, size_t n)
{
	unsigned d = 0;

	if (n < 2)
		return (unsigned)n; /* and no qsort of a NULL vector */
	qsort(v, n, sizeof(*v), ip_order);
	for (size_t i = 0; i < n; i++)
		d += i == 0 || !ng_ip_eq(&v[i - 1], &v[i]);
	return d;
}

static void read_learned(struct ng_nl *nl, const struct ng_policy *pol, struct ng_view_pod *v)
{
	struct ng_set_spec sets[NG_S_COUNT];
	struct learned_ctx c = {.pol = pol, .v = v};
	struct ng_err err = {0};

	for (size_t k = 0; k < pol->name_entries.n && k < 32; k++) {
		struct ng_view_name vn;

		ng_view_name_set(&vn, &pol->name_entries.v[k]);
		if (ng_vec_push(&v->names, &vn) < 0)
			return;
	}
	if (!pol->learn)
		return;
	ng_render_set_specs(pol, sets);
	for (int i = 0; i < NG_S_COUNT; i++) {
		if (!sets[i].learned)
			continue;
		c.spec = &sets[i];
		c.fam = sets[i].fam == NG_V4 ? 0 : 1;
		ng_learned_each(nl, NFPROTO_INET, NG_TABLE, &sets[i], learned_one, &c, &err);
	}
	for (size_t k = 0; k < v->names.n && k < 32; k++)
		v->names.v[k].addresses = distinct(c.seen[k].v, c.seen[k].n);
	for (int k = 0; k < 32; k++)
		ng_vec_free(&c.seen[k]);
}

void ng_podstate_read(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_record *d,
		      const struct ng_policy *pol, struct ng_view_pod *v)
{
	bool pod_ok = true, node_ok = true;

	v->counters.n = 0;
	v->names.n = 0;
	v->learned[0] = v->learned[1] = 0;
	for (size_t i = 0; i < d->tables.n; i++) {
		const struct ng_record_table *t = &d->tables.v[i];
		struct ng_nl *s = t->in_node ? node_nl : nl;
		bool there = s && read_counters(s, t, v);

		if (t->in_node)
			node_ok &= there;
		else
			pod_ok &= there;
	}
	v->pod_present = pod_ok;
	v->node_present = v->has_node_side && node_ok;
	if (pol)
		read_learned(nl, pol, v);
	v->read_ok = true;
	v->read_error[0] = '\0';
}

/* Is table `t` there (node side, a read of that table)? 1 yes, 0 no, -1
 * it could not be read (a busy node: the read kept being interrupted),
 * which is not drift. */
static int table_there(struct ng_nl *nl, const struct ng_record_table *t, struct ng_err *err)
{
	struct ng_snapshot s = {.family = t->family};
	int rc = ng_ruleset_snapshot(nl, t->name, &s, err);

	ng_snapshot_free(&s);
	return rc == 0 ? 1 : rc == -ENOENT ? 0 : -1;
}

int ng_podstate_check(struct ng_nl *nl, struct ng_nl *node_nl, const struct ng_record *d,
		      const struct ng_policy *pol, char *diff, size_t len)
{
	const struct ng_record_table *host = ng_record_host_table(d);
	struct ng_err err = {0};
	int rc = ng_ruleset_check(nl, pol, NG_TABLE, NULL, &err);

	/* The host side compared too, as CHECK compares it. */
	if (rc == 0 && pol->host && host)
		rc = ng_podtables_check_host(node_nl, pol, host->name, &err);
	if (rc < 0) {
		snprintf(diff, len, "%s", err.msg);
		return err.code == NG_E_CHECK ? 1 : -1;
	}
	for (size_t i = 0; i < d->tables.n; i++) {
		const struct ng_record_table *t = &d->tables.v[i];

		if (!t->in_node)
			continue;
		int there = node_nl ? table_there(node_nl, t, &err) : 0;

		if (there < 0) {
			snprintf(diff, len, "%s", err.msg);
			return -1;
		}
		if (!there) {
			snprintf(diff, len, "node-side table %s %s is missing",
				 t->family == NFPROTO_NETDEV ? "netdev" : "inet", t->name);
			return 1;
		}
	}
	diff[0] = '\0';
	return 0;
}
