/* Which live flows a policy admits. See admits.h. */
#include "policy/admits.h"

#include <string.h>

/* `ip` within an element's address range, on its protocol (0: any) and
 * within its second-dimension range (a port). */
static bool in_elems(const ng_elem_vec *v, const struct ng_ip *ip, uint8_t proto, uint16_t port)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ng_elem *e = &v->v[i];

		if (e->lo.fam == ip->fam && ng_ip_cmp(&e->lo, ip) <= 0 && ng_ip_cmp(ip, &e->hi) <= 0 &&
		    (e->proto == 0 || e->proto == proto) && e->p_lo <= port && port <= e->p_hi)
			return true;
	}
	return false;
}

static bool in_ips(const ng_ip_vec *v, const struct ng_ip *ip)
{
	for (size_t i = 0; i < v->n; i++)
		if (ng_ip_eq(&v->v[i], ip))
			return true;
	return false;
}

static bool loopback(const struct ng_ip *ip)
{
	static const uint8_t one6[16] = {[15] = 1};

	return ip->fam == NG_V4 ? ip->a[0] == 127 : !memcmp(ip->a, one6, sizeof(one6));
}

bool ng_policy_admits(const struct ng_policy *p, const struct ng_flow *f)
{
	int x = NG_FAM_IDX(f->dst.fam);
	bool to_pod = in_ips(&p->source[x], &f->dst);

	if (loopback(&f->dst) || (to_pod && in_ips(&p->source[x], &f->src)))
		return true;
	if (ng_policy_is_metadata(p, &f->dst))
		return false;
	if (p->audit)
		return true;
	if (to_pod)
		return f->proto == NG_PROTO_TCP &&
		       (in_ips(&p->node[x], &f->src) || in_elems(&p->ingress[x], &f->src, 0, f->dport));
	return in_elems(&p->dns[x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->allow[x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->names[x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->learned[0][x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->learned[1][x], &f->dst, f->proto, f->dport);
}

/* `e` inside one element of `v` (its addresses, protocol or any, ports). */
static bool elem_within(const struct ng_elem *e, const ng_elem_vec *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const struct ng_elem *o = &v->v[i];

		if (o->lo.fam == e->lo.fam && ng_ip_cmp(&o->lo, &e->lo) <= 0 &&
		    ng_ip_cmp(&e->hi, &o->hi) <= 0 && (o->proto == 0 || o->proto == e->proto) &&
		    o->p_lo <= e->p_lo && e->p_hi <= o->p_hi)
			return true;
	}
	return false;
}

static bool all_within(const ng_elem_vec *old, const ng_elem_vec *now, const ng_elem_vec *also)
{
	for (size_t i = 0; i < old->n; i++)
		if (!elem_within(&old->v[i], now) && (!also || !elem_within(&old->v[i], also)))
			return false;
	return true;
}

static bool ips_within(const ng_ip_vec *old, const ng_ip_vec *now)
{
	for (size_t i = 0; i < old->n; i++)
		if (!in_ips(now, &old->v[i]))
			return false;
	return true;
}

/* Each (protocol, ports) of `old`'s names lies in one of `now`'s. */
static bool shapes_within(const ng_elem_vec *old, const ng_elem_vec *now)
{
	for (size_t i = 0; i < old->n; i++) {
		bool in = false;

		for (size_t j = 0; j < now->n && !in; j++)
			in = now->v[j].proto == old->v[i].proto && now->v[j].p_lo <= old->v[i].p_lo &&
			     old->v[i].p_hi <= now->v[j].p_hi;
		if (!in)
			return false;
	}
	return true;
}

bool ng_policy_covers(const struct ng_policy *now, const struct ng_policy *old)
{
	if (old->audit && !now->audit)
		return false;
	if (old->learn != now->learn || !shapes_within(&old->name_ports, &now->name_ports))
		return false;
	/* "resolve": the names are asked again, their addresses may move */
	if (!now->learn && now->name_ports.n)
		return false;
	for (int f = 0; f < 2; f++)
		if (!ips_within(&now->metadata[f], &old->metadata[f]))
			return false;
	if (now->audit)
		return true;
	for (int f = 0; f < 2; f++)
		if (!all_within(&old->allow[f], &now->allow[f], &now->dns[f]) ||
		    !all_within(&old->dns[f], &now->dns[f], &now->allow[f]) ||
		    !all_within(&old->ingress[f], &now->ingress[f], NULL) ||
		    !ips_within(&old->node[f], &now->node[f]))
			return false;
	return true;
}
