/* The pure half of a grant change. See grantplan.h. */
#include "agent/grantplan.h"

#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

bool ng_grantplan_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int ng_grantplan_removed(const ng_dest_vec *old, const ng_dest_vec *now, ng_dest_vec *out)
{
	for (size_t i = 0; i < old->n; i++) {
		bool kept = false;

		for (size_t j = 0; j < now->n && !kept; j++)
			kept = ng_dest_within(&old->v[i], &now->v[j]);
		if (!kept && ng_vec_push(out, &old->v[i]) < 0)
			return -1;
	}
	return 0;
}

static bool in_elems(const ng_elem_vec *v, const struct ng_ip *dst, uint8_t proto, uint16_t dport)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ng_elem *e = &v->v[i];

		if (e->lo.fam == dst->fam && ng_ip_cmp(&e->lo, dst) <= 0 && ng_ip_cmp(dst, &e->hi) <= 0 &&
		    (e->proto == 0 || e->proto == proto) && e->p_lo <= dport && dport <= e->p_hi)
			return true;
	}
	return false;
}

bool ng_grantplan_cuts(const struct ng_ip *dst, uint8_t proto, uint16_t dport, void *grantcut)
{
	const struct ng_grantcut *gc = grantcut;
	int f = NG_FAM_IDX(dst->fam);
	bool hit = false;

	for (size_t i = 0; i < gc->removed->n && !hit; i++) {
		const struct ng_dest *g = &gc->removed->v[i];

		hit = g->proto == proto && g->port_lo <= dport && dport <= g->port_hi &&
		      (g->kind != NG_HOST_PREFIX ||
		       (g->net.ip.fam == dst->fam && ng_prefix_contains_ip(&g->net, dst)));
	}
	return hit && !in_elems(&gc->now->allow[f], dst, proto, dport) &&
	       !in_elems(&gc->now->dns[f], dst, proto, dport);
}

void ng_grantplan_list(const ng_dest_vec *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < v->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", v->v[i].text);
	if (!v->n)
		snprintf(buf, len, "none");
}
