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

/* A name entry's protocol and ports (its shape: no address). */
static bool in_shapes(const ng_elem_vec *v, uint8_t proto, uint16_t port)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->v[i].proto == proto && v->v[i].p_lo <= port && port <= v->v[i].p_hi)
			return true;
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
	/* "resolve": what a name resolves to moves with time, and the
	 * addresses a flow was opened to are not kept per name: a flow on a
	 * name entry's protocol and port stays */
	if (!p->learn && in_shapes(&p->name_ports, f->proto, f->dport))
		return true;
	return in_elems(&p->dns[x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->allow[x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->learned[0][x], &f->dst, f->proto, f->dport) ||
	       in_elems(&p->learned[1][x], &f->dst, f->proto, f->dport);
}
