#include "policy/normalize.h"
#include "policy/policy.h"
#include "policy/podcomment.h"

#include "base/version.h"
#include "policy/dnsparse.h"
#include "policy/metadata.h"

#include <stdio.h>
#include <string.h>

#define ICMPV6_ND_RS 133 /* router solicitation */
#define ICMPV6_ND_NS 135 /* neighbour solicitation */
#define ICMPV6_ND_NA 136 /* neighbour advertisement */

static int push_ip_once(ng_ip_vec *v, const struct ng_ip *ip)
{
	for (size_t i = 0; i < v->n; i++)
		if (ng_ip_eq(&v->v[i], ip))
			return 0;
	return ng_vec_push(v, ip);
}

static struct ng_elem prefix_elem(const struct ng_prefix *p, uint8_t proto, uint16_t lo, uint16_t hi,
				  uint32_t timeout)
{
	struct ng_elem e = {.proto = proto, .p_lo = lo, .p_hi = hi, .timeout = timeout};

	ng_prefix_first(p, &e.lo);
	ng_prefix_last(p, &e.hi);
	return e;
}

static struct ng_elem host_elem(const struct ng_ip *ip, uint8_t proto, uint16_t lo, uint16_t hi,
				uint32_t timeout)
{
	struct ng_elem e = {.lo = *ip, .hi = *ip, .proto = proto, .p_lo = lo, .p_hi = hi, .timeout = timeout};
	return e;
}

static const struct ng_resolved_name *find_answer(const ng_resolved *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

/* Adds one destination (allow entry or grant) to the allow or name sets.
 * `code` is the refusal code for its source (config or annotation). */
static int add_dest(struct ng_policy *p, const struct ng_config *cfg, const struct ng_dest *d,
		    const ng_resolved *resolved, int code, struct ng_err *err)
{
	const struct ng_resolved_name *ans;

	if (d->kind == NG_HOST_PREFIX) {
		struct ng_elem e = prefix_elem(&d->net, d->proto, d->port_lo, d->port_hi, 0);

		if (ng_vec_push(&p->allow[NG_FAM_IDX(d->net.ip.fam)], &e) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		return 0;
	}
	/* A name: record its shape for CHECK, then its addresses if resolved. */
	struct ng_elem shape = {.proto = d->proto, .p_lo = d->port_lo, .p_hi = d->port_hi};
	if (ng_vec_push(&p->name_ports, &shape) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	if (p->learn) {
		struct ng_name_entry ne = {.wildcard = d->kind == NG_HOST_WILDCARD,
					   .proto = d->proto,
					   .p_lo = d->port_lo,
					   .p_hi = d->port_hi};

		snprintf(ne.name, sizeof(ne.name), "%.*s", (int)sizeof(ne.name) - 1, d->name);
		if (ng_vec_push(&p->name_entries, &ne) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		return 0; /* nothing resolved: the agent learns from answers */
	}
	if (!resolved)
		return 0;
	ans = find_answer(resolved, d->name);
	if (!ans || ans->answers.n == 0)
		return ng_fail(err, NG_E_TRY_AGAIN, "destination \"%s\": the name %s did not resolve",
			       d->text, d->name);
	for (size_t i = 0; i < ans->answers.n; i++) {
		const struct ng_answer *a = &ans->answers.v[i];
		/* Resolved at ADD, allowed for the pod's life (timeout 0): an
		 * expiry would cut live connections through the stateless guard,
		 * and nothing re-resolves. CHECK reports a name whose current
		 * answer no longer holds them. */
		struct ng_elem e = host_elem(&a->ip, d->proto, d->port_lo, d->port_hi, 0);

		e.dns_name = d->name;
		struct ng_prefix host = {.ip = a->ip, .plen = a->ip.fam == NG_V4 ? 32 : 128};

		/* Whoever answers DNS (or owns the name) must not open the
		 * metadata endpoint: refused like an allow entry covering it.
		 * `what` is formatted only on failure, as in config.c. */
		if (ng_check_not_metadata(cfg, &host, "", code, NULL) < 0) {
			char what[NG_IP_STRLEN + 320];

			ng_ip_format(&a->ip, what, NG_IP_STRLEN);
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " (an address of %.250s)",
				 d->name);
			return ng_check_not_metadata(cfg, &host, what, code, err);
		}
		if (ng_vec_push(&p->names[NG_FAM_IDX(a->ip.fam)], &e) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* Egress neighbour discovery, IPv6 only: NS/NA to link-scope destinations
 * and the pod's own on-link prefixes and gateways, and router
 * solicitations to all-routers (ff02::2): the kernel sends them by itself
 * when the link comes up, so refusing them counted every idle pod as
 * denying egress; they reach on-link routers only and ask nothing but an
 * advertisement, which ingress still refuses. Nothing here can be routed
 * off the link. MLD reports are not in this set: see add_mld. */
#define ND_MIN_PLEN 64 /* the widest on-link prefix ND is allowed to */

static int add_nd(struct ng_policy *p, const struct ng_prev *prev)
{
	static const char *const link_scope[] = {"fe80::/10", "ff02::/16"};
	struct ng_prefix pre;

	for (size_t i = 0; i < 2; i++) {
		struct ng_elem e;

		ng_prefix_parse(link_scope[i], &pre, NULL);
		e = prefix_elem(&pre, 0, ICMPV6_ND_NS, ICMPV6_ND_NA, 0);
		if (ng_vec_push(&p->nd6, &e) < 0)
			return -1;
	}
	{
		struct ng_ip all_routers;
		struct ng_elem e;

		ng_ip_parse("ff02::2", &all_routers);
		e = host_elem(&all_routers, 0, ICMPV6_ND_RS, ICMPV6_ND_RS, 0);
		if (ng_vec_push(&p->nd6, &e) < 0)
			return -1;
	}
	for (size_t i = 0; i < prev->addrs.n; i++) {
		const struct ng_ifaddr *a = &prev->addrs.v[i];
		struct ng_elem e;

		if (a->ip.fam != NG_V6)
			continue;
		/* A prevResult claiming a wider on-link prefix than /64 (even
		 * "/0") must not turn ND into an ICMPv6 path to anywhere: IPv6
		 * subnets are /64, so ND beyond that is refused. */
		pre.ip = a->ip;
		pre.plen = a->plen < ND_MIN_PLEN ? ND_MIN_PLEN : a->plen;
		ng_ip_mask(&pre.ip, pre.plen);
		e = prefix_elem(&pre, 0, ICMPV6_ND_NS, ICMPV6_ND_NA, 0);
		if (ng_vec_push(&p->nd6, &e) < 0)
			return -1;
	}
	for (size_t i = 0; i < prev->gateways.n; i++) {
		struct ng_elem e;

		if (prev->gateways.v[i].fam != NG_V6)
			continue;
		e = host_elem(&prev->gateways.v[i], 0, ICMPV6_ND_NS, ICMPV6_ND_NA, 0);
		if (ng_vec_push(&p->nd6, &e) < 0)
			return -1;
	}
	return 0;
}

/* The groups an MLDv2 report may name (issue 13): the solicited-node
 * groups ff02::1:ffXX:XXXX of the pod's own IPv6 addresses and of the
 * EUI-64 link-local address of each interface in the sandbox (its low 24
 * bits are the MAC's last three bytes), which ND needs. The kernel reports
 * them by itself, several in one report (issue 22; nft/render_mld.h says
 * how the rules read them). A group any process joins (16 bytes of its
 * choosing, reported to every neighbour) is not one. */
static int add_mld(struct ng_policy *p, const struct ng_prev *prev)
{
	struct ng_ip g = {.fam = NG_V6, .a = {0xff, 0x02, [11] = 1, [12] = 0xff}};

	for (size_t i = 0; i < prev->addrs.n; i++) {
		if (prev->addrs.v[i].ip.fam != NG_V6)
			continue;
		memcpy(g.a + 13, prev->addrs.v[i].ip.a + 13, 3);
		if (push_ip_once(&p->mld6, &g) < 0)
			return -1;
	}
	for (size_t i = 0; i < prev->macs.n; i++) {
		memcpy(g.a + 13, prev->macs.v[i].a + 3, 3);
		if (push_ip_once(&p->mld6, &g) < 0)
			return -1;
	}
	return 0;
}

static int add_ingress(struct ng_policy *p, const struct ng_config *cfg, const struct ng_prev *prev)
{
	for (size_t s = 0; s < cfg->ingress_sources.n; s++) {
		const struct ng_prefix *src = &cfg->ingress_sources.v[s];

		for (size_t i = 0; i < cfg->ingress_ports.n; i++) {
			uint16_t port = cfg->ingress_ports.v[i];
			struct ng_elem e = prefix_elem(src, 0, port, port, 0);

			if (ng_vec_push(&p->ingress[NG_FAM_IDX(src->ip.fam)], &e) < 0)
				return -1;
		}
	}
	if (cfg->allow_node) {
		for (size_t i = 0; i < prev->gateways.n; i++) {
			const struct ng_ip *gw = &prev->gateways.v[i];

			if (push_ip_once(&p->node[NG_FAM_IDX(gw->fam)], gw) < 0)
				return -1;
		}
	}
	return 0;
}

static int add_dns(struct ng_policy *p, const struct ng_config *cfg)
{
	static const uint8_t protos[] = {NG_PROTO_UDP, NG_PROTO_TCP};

	for (size_t i = 0; i < cfg->dns.servers.n; i++) {
		const struct ng_ip *ip = &cfg->dns.servers.v[i];
		ng_elem_vec *v = &p->dns[NG_FAM_IDX(ip->fam)];

		for (size_t k = 0; k < 2; k++) {
			struct ng_elem e = host_elem(ip, protos[k], 53, 53, 0);
			bool dup = false;

			for (size_t j = 0; j < v->n; j++)
				dup |= ng_ip_eq(&v->v[j].lo, ip) && v->v[j].proto == protos[k];
			if (!dup && ng_vec_push(v, &e) < 0)
				return -1;
		}
	}
	return 0;
}

/* Cuts the name entries' port ranges, per protocol, at every range edge:
 * the pieces covered by at least one entry, in order. */
static int name_pieces(struct ng_policy *p)
{
	static const uint8_t protos[] = {NG_PROTO_TCP, NG_PROTO_UDP};

	for (size_t k = 0; k < 2; k++) {
		NG_VEC(uint32_t) cuts = {0};
		int rc = 0;

		for (size_t i = 0; i < p->name_entries.n && rc == 0; i++) {
			const struct ng_name_entry *e = &p->name_entries.v[i];
			uint32_t lo = e->p_lo, hi = (uint32_t)e->p_hi + 1;

			if (e->proto == protos[k])
				rc = ng_vec_push(&cuts, &lo) < 0 || ng_vec_push(&cuts, &hi) < 0 ? -1 : 0;
		}
		/* Insertion sort: a few hundred edges at most (256 grants). */
		for (size_t i = 1; i < cuts.n; i++)
			for (size_t j = i; j > 0 && cuts.v[j - 1] > cuts.v[j]; j--) {
				uint32_t t = cuts.v[j];

				cuts.v[j] = cuts.v[j - 1];
				cuts.v[j - 1] = t;
			}
		for (size_t i = 0; i + 1 < cuts.n && rc == 0; i++) {
			struct ng_elem piece = {.proto = protos[k],
						.p_lo = (uint16_t)cuts.v[i],
						.p_hi = (uint16_t)(cuts.v[i + 1] - 1)};
			bool covered = false;

			if (cuts.v[i] == cuts.v[i + 1])
				continue;
			for (size_t j = 0; j < p->name_entries.n; j++) {
				const struct ng_name_entry *e = &p->name_entries.v[j];

				covered |= e->proto == piece.proto && e->p_lo <= piece.p_lo &&
					   piece.p_hi <= e->p_hi;
			}
			if (covered && ng_vec_push(&p->name_pieces, &piece) < 0)
				rc = -1;
		}
		ng_vec_free(&cuts);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int ng_policy_link(struct ng_policy *p, const struct ng_link_facts *f, bool host, struct ng_err *err)
{
	for (size_t i = 0; i < f->n_link_local; i++)
		if (push_ip_once(&p->source[1], &f->link_local[i]) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	p->host = host && f->peer[0];
	if (!p->host)
		return 0;
	snprintf(p->host_dev, sizeof(p->host_dev), "%s", f->peer);
	p->host_ifindex = f->peer_ifindex;
	memcpy(p->mac, f->mac, sizeof(p->mac));
	/* Cut to what nftables keeps: the network name is needed whole by GC,
	 * the pod's name is for people. */
	char full[1024];

	snprintf(full, sizeof(full), "boxxkite-netguard %s host: ifindex %d dev %s network %s pod %s",
		 NG_VERSION, f->peer_ifindex, f->peer, p->network, p->pod);
	memcpy(p->host_comment, full, sizeof(p->host_comment) - 1);
	p->host_comment[sizeof(p->host_comment) - 1] = '\0';
	return 0;
}

/* dns.alwaysAllowed, in the shape of name entries (ports unused). */
static int add_always(struct ng_policy *p, const struct ng_config *cfg)
{
	p->queries_listed = cfg->dns.queries_listed;
	p->refused_rcode = cfg->dns.refused_rcode;
	for (size_t i = 0; p->queries_listed && i < cfg->dns.always.n; i++) {
		const struct ng_dest *d = &cfg->dns.always.v[i];
		struct ng_name_entry ne = {.wildcard = d->kind == NG_HOST_WILDCARD};

		snprintf(ne.name, sizeof(ne.name), "%.*s", (int)sizeof(ne.name) - 1, d->name);
		if (ng_vec_push(&p->dns_always, &ne) < 0)
			return -1;
	}
	return 0;
}

int ng_policy_compile(const struct ng_config *cfg, const struct ng_annotations *ann,
		      const struct ng_prev *prev, const ng_resolved *resolved, const struct ng_podref *pod,
		      struct ng_policy *out, struct ng_err *err)
{
	memset(out, 0, sizeof(*out));
	out->deny = cfg->deny;
	out->nflog = cfg->nflog_group >= 0;
	out->nflog_group = out->nflog ? (uint16_t)cfg->nflog_group : 0;
	out->log_rate = cfg->log_rate;
	out->log_burst = cfg->log_burst;
	out->raw_guard = cfg->raw_guard;
	out->learn = cfg->learn;
	out->min_name_ttl = cfg->min_name_ttl;
	snprintf(out->ifname, sizeof(out->ifname), "%s", pod && pod->ifname[0] ? pod->ifname : "eth0");
	ng_policy_describe_pod(pod, out);

	for (size_t i = 0; i < cfg->metadata.n; i++) {
		const struct ng_ip *ip = &cfg->metadata.v[i];

		if (push_ip_once(&out->metadata[NG_FAM_IDX(ip->fam)], ip) < 0)
			goto oom;
		for (int f = 0; ip->fam == NG_V4 && f < NG_V6_FORMS; f++) {
			struct ng_ip e;

			ng_v6_form_embed(&ng_v6_forms[f], ip, &e);
			if (push_ip_once(&out->metadata6_embedded, &e) < 0)
				goto oom;
		}
	}
	if (add_dns(out, cfg) < 0 || add_always(out, cfg) < 0)
		goto oom;
	for (size_t i = 0; i < cfg->allow.n; i++)
		if (add_dest(out, cfg, &cfg->allow.v[i], resolved, NG_E_CONFIG, err) < 0)
			return -1;
	for (size_t i = 0; ann && i < ann->grants.n; i++)
		if (add_dest(out, cfg, &ann->grants.v[i], resolved, NG_E_ENVELOPE, err) < 0)
			return -1;
	if (add_nd(out, prev) < 0 || add_mld(out, prev) < 0 || add_ingress(out, cfg, prev) < 0)
		goto oom;
	snprintf(out->network, sizeof(out->network), "%s", cfg->name);
	for (size_t i = 0; i < prev->addrs.n; i++) {
		const struct ng_ip *ip = &prev->addrs.v[i].ip;

		if (ip->fam == NG_V4 && push_ip_once(&out->pod4, ip) < 0)
			goto oom;
		if (push_ip_once(&out->source[NG_FAM_IDX(ip->fam)], ip) < 0)
			goto oom;
	}

	for (int f = 0; f < 2; f++) {
		if (ng_elems_normalize(&out->allow[f]) < 0 || ng_elems_normalize(&out->names[f]) < 0 ||
		    ng_elems_normalize(&out->ingress[f]) < 0)
			goto oom;
	}
	/* Learning only where there is a name to learn, or a query to check
	 * (dns.queries "listed": a pod with no name entry may still ask for
	 * nothing but dns.alwaysAllowed, and the agent must see every query);
	 * otherwise the table queues nothing and the pod needs no agent. */
	out->learn = out->learn && (out->name_entries.n > 0 || out->queries_listed);
	if (ng_elems_normalize(&out->nd6) < 0 || (out->learn && name_pieces(out) < 0))
		goto oom;
	return 0;
oom:
	return ng_fail(err, NG_E_INTERNAL, "out of memory while compiling the policy");
}

void ng_policy_free(struct ng_policy *p)
{
	ng_vec_free(&p->metadata6_embedded);
	ng_vec_free(&p->mld6);
	for (int f = 0; f < 2; f++) {
		ng_vec_free(&p->metadata[f]);
		ng_vec_free(&p->dns[f]);
		ng_vec_free(&p->allow[f]);
		ng_vec_free(&p->names[f]);
		ng_vec_free(&p->ingress[f]);
		ng_vec_free(&p->node[f]);
		ng_vec_free(&p->source[f]);
		ng_vec_free(&p->learned[0][f]);
		ng_vec_free(&p->learned[1][f]);
		ng_vec_free(&p->learned_node[0][f]);
		ng_vec_free(&p->learned_node[1][f]);
	}
	ng_vec_free(&p->nd6);
	ng_vec_free(&p->name_ports);
	ng_vec_free(&p->pod4);
	ng_vec_free(&p->name_entries);
	ng_vec_free(&p->name_pieces);
	ng_vec_free(&p->dns_always);
}

int ng_policy_names(const struct ng_config *cfg, const struct ng_annotations *ann, ng_name_list *out)
{
	const struct ng_dest *lists[2] = {cfg->allow.v, ann ? ann->grants.v : NULL};
	size_t counts[2] = {cfg->allow.n, ann ? ann->grants.n : 0};

	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const struct ng_dest *d = &lists[l][i];
			bool dup = false;

			if (d->kind != NG_HOST_NAME)
				continue;
			for (size_t j = 0; j < out->n; j++)
				dup |= strcmp(out->v[j], d->name) == 0;
			const char *name = d->name;
			if (!dup && ng_vec_push(out, &name) < 0)
				return -1;
		}
	}
	return 0;
}

void ng_resolved_free(ng_resolved *r)
{
	for (size_t i = 0; i < r->n; i++)
		ng_vec_free(&r->v[i].answers);
	ng_vec_free(r);
}
