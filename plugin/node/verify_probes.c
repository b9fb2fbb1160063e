#include "node/verify_probes.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/counters.h"
#include "nft/render.h"
#include "node/probe.h"

#define METADATA_PORT 80

static uint64_t counter_packets(struct ng_nl *nl, const char *name)
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	const struct ng_counter *c;
	uint64_t n = 0;

	if (ng_counters_read(nl, NG_TABLE, &v, &err) == 0 && (c = ng_counter_find(&v, name)))
		n = c->packets;
	ng_vec_free(&v);
	return n;
}

/* The pod's first interface other than loopback: the scope for probing an
 * IPv6 link-local endpoint (fe80::a9fe:a9fe). */
static unsigned pod_ifindex(const struct ng_netinfo *ni)
{
	for (size_t i = 0; i < ni->links.n; i++)
		if (!ni->links.v[i].loopback)
			return (unsigned)ni->links.v[i].ifindex;
	return 0;
}

static bool link_local(const struct ng_ip *ip)
{
	return ip->fam == NG_V6 && ip->a[0] == 0xfe && (ip->a[1] & 0xc0) == 0x80;
}

void ng_verify_probe_metadata(struct run *r, struct ng_nl *nl, const struct ng_netinfo *ni)
{
	for (size_t i = 0; i < r->cfg.metadata.n; i++) {
		const struct ng_ip *ip = &r->cfg.metadata.v[i];
		uint64_t before = counter_packets(nl, NG_COUNTER_METADATA), after;
		uint64_t eg_before = counter_packets(nl, NG_COUNTER_EGRESS), eg_after;
		char addr[NG_IP_STRLEN], check[96];
		struct ng_probe p;

		ng_ip_format(ip, addr, sizeof(addr));
		snprintf(check, sizeof(check), ip->fam == NG_V4 ? "metadata %s:%d" : "metadata [%s]:%d", addr,
			 METADATA_PORT);
		if (link_local(ip) && !pod_ifindex(ni)) {
			ng_vrow(r, check, NG_SKIP, -1, "no interface to scope a link-local address to");
			continue;
		}
		ng_probe_tcp(ip, METADATA_PORT, link_local(ip) ? pod_ifindex(ni) : 0, r->o->timeout_ms, &p);
		after = counter_packets(nl, NG_COUNTER_METADATA);
		eg_after = counter_packets(nl, NG_COUNTER_EGRESS);
		switch (p.result) {
		case NG_PROBE_REFUSED:
			ng_vrow(r, check, NG_PASS, p.ms, "refused in %.2f ms%s", p.ms,
				after > before         ? " (metadata_denied +1: by netguard)"
				: eg_after > eg_before ? " (egress_denied +1: netguard's default deny, not "
							 "its metadata rule)"
						       : " (not by a netguard counter)");
			break;
		case NG_PROBE_UNREACHABLE:
			ng_vrow(r, check, NG_PASS, p.ms, "unreachable in %.2f ms (%s)", p.ms,
				strerror(p.err));
			break;
		case NG_PROBE_TIMEOUT:
			ng_vrow(r, check, NG_AMBIGUOUS, p.ms,
				"no answer in %d ms: dropped somewhere, or slow; a refusal should be "
				"immediate",
				r->o->timeout_ms);
			break;
		case NG_PROBE_CONNECTED:
			ng_vrow(r, check, NG_FAIL, p.ms,
				"CONNECTED in %.2f ms: the metadata endpoint is reachable", p.ms);
			break;
		case NG_PROBE_ERROR:
			ng_vrow(r, check, NG_FAIL, p.ms, "probe error: %s", strerror(p.err));
			break;
		}
	}
}

static const char *rcode_name(unsigned rcode)
{
	static const char *const names[] = {"NOERROR",  "FORMERR", "SERVFAIL",
					    "NXDOMAIN", "NOTIMP",  "REFUSED"};

	return rcode < 6 ? names[rcode] : "other";
}

void ng_verify_probe_dns(struct run *r)
{
	if (!r->have_cfg || r->cfg.dns.servers.n == 0) {
		ng_vrow(r, "dns", NG_SKIP, -1,
			r->have_cfg ? "no dns.servers configured" : "no configuration");
		return;
	}
	for (size_t i = 0; i < r->cfg.dns.servers.n; i++) {
		for (int tcp = 0; tcp < 2; tcp++) {
			struct ng_probe p;
			char addr[NG_IP_STRLEN], check[96];

			ng_ip_format(&r->cfg.dns.servers.v[i], addr, sizeof(addr));
			snprintf(check, sizeof(check), "dns %s (%s)", addr, tcp ? "tcp" : "udp");
			ng_probe_dns(&r->cfg.dns.servers.v[i], tcp, r->o->dns_name, r->o->timeout_ms, &p);
			if (p.result == NG_PROBE_CONNECTED)
				ng_vrow(r, check, NG_PASS, p.ms, "answered in %.2f ms (rcode %s)", p.ms,
					rcode_name(p.rcode));
			else
				ng_vrow(r, check, NG_FAIL, p.ms, "%s after %.2f ms%s%s",
					ng_probe_result_name(p.result), p.ms, p.err ? ": " : "",
					p.err ? strerror(p.err) : "");
		}
	}
}

static int parse_hostport(const char *s, struct ng_ip *ip, uint16_t *port)
{
	char host[NG_IP_STRLEN];
	const char *colon = strrchr(s, ':');
	long p;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	p = strtol(colon + 1, NULL, 10);
	if (ng_ip_parse(host, ip) < 0 || p < 1 || p > 65535)
		return -1;
	*port = (uint16_t)p;
	return 0;
}

void ng_verify_probe_denied(struct run *r)
{
	struct ng_ip ip;
	uint16_t port;
	struct ng_probe p;
	bool drop = r->have_cfg && r->cfg.deny == NG_DENY_DROP;
	char check[96];

	if (parse_hostport(r->o->denied, &ip, &port) < 0) {
		ng_vrow(r, "egress outside allowlist", NG_FAIL, -1, "--denied-probe %s: want ADDR:PORT",
			r->o->denied);
		return;
	}
	snprintf(check, sizeof(check), "egress to %.60s", r->o->denied);
	ng_probe_tcp(&ip, port, 0, r->o->timeout_ms, &p);
	switch (p.result) {
	case NG_PROBE_REFUSED: ng_vrow(r, check, NG_PASS, p.ms, "refused in %.2f ms", p.ms); break;
	case NG_PROBE_UNREACHABLE:
		ng_vrow(r, check, NG_PASS, p.ms, "unreachable in %.2f ms (%s)", p.ms, strerror(p.err));
		break;
	case NG_PROBE_TIMEOUT:
		ng_vrow(r, check, drop ? NG_PASS : NG_AMBIGUOUS, p.ms, "no answer in %d ms%s",
			r->o->timeout_ms, drop ? " (denyAction is drop)" : "");
		break;
	default:
		ng_vrow(r, check, NG_FAIL, p.ms, "%s in %.2f ms: outside the allowlist, yet not refused",
			ng_probe_result_name(p.result), p.ms);
	}
}

void ng_verify_counters(struct run *r, struct ng_nl *nl)
{
	ng_counter_vec v = {0};
	struct ng_err err = {0};
	char detail[400] = "";

	if (ng_counters_read(nl, NG_TABLE, &v, &err) < 0) {
		ng_vrow(r, "deny counters", NG_SKIP, -1, "no counters to read");
		return;
	}
	for (size_t i = 0; i < v.n; i++) {
		size_t o = strlen(detail);

		snprintf(detail + o, sizeof(detail) - o, "%s%s %llu packets", i ? ", " : "", v.v[i].name,
			 (unsigned long long)v.v[i].packets);
	}
	ng_vrow(r, "deny counters", NG_INFO, -1, "%s", detail);
	ng_vec_free(&v);
}
