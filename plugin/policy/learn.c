#include "policy/learn.h"

#include <string.h>

#include "policy/metadata.h"

uint32_t ng_learn_lifetime(const struct ng_policy *p, uint32_t ttl)
{
	uint32_t cap = p->min_name_ttl > NG_LEARN_TTL_CAP ? p->min_name_ttl : NG_LEARN_TTL_CAP;
	uint32_t t = ttl > p->min_name_ttl ? ttl : p->min_name_ttl;

	return t < cap ? t : cap;
}

bool ng_policy_is_metadata(const struct ng_policy *p, const struct ng_ip *ip)
{
	const ng_ip_vec *v = &p->metadata[NG_FAM_IDX(ip->fam)];
	const ng_ip_vec *v4 = &p->metadata[NG_FAM_IDX(NG_V4)];

	for (size_t i = 0; i < v->n; i++)
		if (ng_ip_eq(&v->v[i], ip))
			return true;
	/* The forms with free bits too (6to4, Teredo, NAT64 local prefixes). */
	return ng_ip_is_metadata_form(ip, v4->v, v4->n);
}

bool ng_name_entry_matches(const struct ng_name_entry *e, const char *name)
{
	return e->wildcard ? ng_name_under(name, e->name, true) : strcmp(e->name, name) == 0;
}

static int push_once(ng_elem_vec *v, const struct ng_elem *e)
{
	for (size_t i = 0; i < v->n; i++) {
		struct ng_elem *o = &v->v[i];

		if (ng_ip_eq(&o->lo, &e->lo) && o->proto == e->proto && o->p_lo == e->p_lo &&
		    o->p_hi == e->p_hi) {
			if (e->timeout > o->timeout) /* the longer lifetime wins */
				o->timeout = e->timeout;
			return 0;
		}
	}
	return ng_vec_push(v, e);
}

void ng_learn_result_free(struct ng_learn_result *r)
{
	ng_vec_free(&r->pairs);
	for (int f = 0; f < 2; f++) {
		ng_vec_free(&r->single[f]);
		ng_vec_free(&r->ranges[f]);
	}
}

int ng_learn(const struct ng_policy *p, const struct ng_dns_msg *m, struct ng_learn_result *r)
{
	struct ng_dns_chain c;
	/* on[i][k]: entry i matches chain name k (compared once per answer). */
	bool on[256][NG_DNS_MAX_CHAIN + 1], matched[256];
	ng_dns_aliases by;
	size_t ne = p->name_entries.n < 256 ? p->name_entries.n : 256;
	bool any = false;

	for (int f = 0; f < 2; f++)
		r->single[f].n = r->ranges[f].n = 0;
	r->metadata = r->addresses = 0;
	r->pairs.n = 0;
	r->first_entry = -1;
	ng_dns_chain(m, &c);
	for (size_t i = 0; i < ne; i++) {
		matched[i] = false;
		for (unsigned k = 0; k < c.n; k++) {
			on[i][k] = ng_name_entry_matches(&p->name_entries.v[i], m->names[c.name[k]]);
			matched[i] |= on[i][k];
		}
		if (matched[i] && r->first_entry < 0)
			r->first_entry = (int)i;
		any |= matched[i];
	}
	if (!any)
		return 0;
	ng_dns_chain_aliases(m, &c, by);
	for (uint16_t k = 0; k < m->n_rrs; k++) {
		const struct ng_dns_rr *rr = &m->rrs[k];
		int owner;

		if (rr->type != NG_DNS_T_A && rr->type != NG_DNS_T_AAAA)
			continue;
		owner = ng_dns_chain_find(m, &c, rr->owner);
		if (owner < 0)
			continue; /* not an answer to this question */
		if (ng_policy_is_metadata(p, &rr->ip)) {
			r->metadata++;
			continue;
		}
		uint32_t ttl = rr->ttl < c.ttl[owner] ? rr->ttl : c.ttl[owner];
		uint32_t life = ng_learn_lifetime(p, ttl);
		int f = NG_FAM_IDX(rr->ip.fam);

		for (size_t i = 0; i < ne; i++) {
			const struct ng_name_entry *e = &p->name_entries.v[i];
			bool teaches = false;

			/* Only entries matching the owner or a name aliased to it:
			 * never one that only matches a CNAME target downstream. */
			for (unsigned j = 0; matched[i] && j < c.n && !teaches; j++)
				teaches = on[i][j] && by[owner][j];
			if (!teaches)
				continue;
			/* Duplicates are left to the reader's table (agent/taught.h): a
			 * check here would be quadratic in the answer's records. */
			struct ng_learn_pair pair = {.entry = (uint16_t)i, .ip = rr->ip};

			if (ng_vec_push(&r->pairs, &pair) < 0)
				return -1;
			r->addresses++;
			for (size_t j = 0; j < p->name_pieces.n; j++) {
				const struct ng_elem *pc = &p->name_pieces.v[j];
				struct ng_elem el = {.lo = rr->ip,
						     .hi = rr->ip,
						     .proto = pc->proto,
						     .p_lo = pc->p_lo,
						     .p_hi = pc->p_hi,
						     .timeout = life};

				if (pc->proto != e->proto || pc->p_lo < e->p_lo || pc->p_hi > e->p_hi)
					continue;
				if (push_once(pc->p_lo == pc->p_hi ? &r->single[f] : &r->ranges[f], &el) < 0)
					return -1;
			}
		}
	}
	return 0;
}
