#include "node/verify_dnsq.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "kernel/ctdump.h"
#include "node/probe.h"

struct ct_find {
	uint16_t port;
	const struct ng_ip *server;
	bool own_flow; /* a flow to the probe's port, not the resolver's */
};

static void one_flow(const struct ng_ip *dst, uint8_t proto, uint16_t dport, void *data)
{
	struct ct_find *c = data;

	if (proto == 17 && dport == c->port && !ng_ip_eq(dst, c->server))
		c->own_flow = true;
}

void ng_verify_dns_unlisted(struct run *r, struct ng_nl *nl)
{
	const char *want;

	if (!r->have_policy || !r->policy.learn || !r->policy.queries_listed)
		return; /* nothing checks this pod's queries: no row (the config row says why) */
	want = r->policy.refused_rcode == 5 ? "REFUSED" : "NXDOMAIN";
	for (size_t i = 0; i < r->cfg.dns.servers.n; i++) {
		const struct ng_ip *server = &r->cfg.dns.servers.v[i];
		char addr[NG_IP_STRLEN], check[160], name[96];
		struct ct_find c = {.server = server};
		struct ng_err err = {0};
		struct ng_probe p;

		ng_ip_format(server, addr, sizeof(addr));
		snprintf(check, sizeof(check), "dns %s: an unlisted name refused in the pod", addr);
		/* A name nobody lists, new each run: "<pid><time>.netguard-verify.invalid". */
		snprintf(name, sizeof(name), "v%x%lx.netguard-verify.invalid", (unsigned)getpid(),
			 (unsigned long)time(NULL));
		ng_probe_dns(server, 0, name, r->o->timeout_ms, &p);
		if (p.result != NG_PROBE_CONNECTED) {
			ng_vrow(r, check, NG_FAIL, p.ms,
				"no answer (%s after %.2f ms): a refused query must be answered at once, or "
				"the agent is not serving the pod",
				ng_probe_result_name(p.result), p.ms);
			continue;
		}
		if (p.rcode != r->policy.refused_rcode || !p.question_ok) {
			ng_vrow(r, check, NG_FAIL, p.ms,
				"answered rcode %u%s in %.2f ms, expected %s with the question", p.rcode,
				p.question_ok ? "" : " without the question", p.ms, want);
			continue;
		}
		c.port = p.lport;
		if (ng_ct_flows(nl, one_flow, &c, &err) < 0) {
			ng_vrow(r, check, NG_FAIL, p.ms,
				"answered %s in %.2f ms, but conntrack unreadable: %s", want, p.ms, err.msg);
			continue;
		}
		if (!c.own_flow)
			ng_vrow(r, check, NG_FAIL, p.ms,
				"answered %s in %.2f ms as the reply of a flow to the resolver: the query "
				"LEFT "
				"the pod",
				want, p.ms);
		else
			ng_vrow(r, check, NG_PASS, p.ms,
				"%s in %.2f ms from the agent: the query never left (conntrack: no flow to "
				"the "
				"resolver, the answer a flow of its own to port %u)",
				want, p.ms, p.lport);
	}
}
