/* Fuzz target: the agent's query path as the pod's queue feeds it
 * (agent/query.h, agent/answer.h): a sequence of packets, each a UDP query,
 * a TCP query segment, a UDP answer or a TCP answer segment between the
 * pod and its resolver, with flags, sequence numbers and payloads from the
 * input. Checked: no crash or leak, the held segments stay within their
 * bound, every byte buffered is given back when the pod goes, and nothing
 * is ever remembered as outstanding beyond NG_OUTQ_MAX.
 *
 * Input: records of [kind][flags][seq delta][len hi][len lo][len bytes].
 * kind & 3: 0 UDP query, 1 TCP query segment, 2 UDP answer, 3 TCP answer. */
#include <linux/netfilter.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/answer.h"
#include "agent/pktbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IFINDEX 7

static void add_dns(struct ng_policy *p, const char *ip, uint8_t proto)
{
	struct ng_elem e = {.proto = proto, .p_lo = 53, .p_hi = 53};

	ng_ip_parse(ip, &e.lo);
	e.hi = e.lo;
	ng_vec_push(&p->dns[0], &e);
}

static struct ng_pod *pod(void)
{
	static const struct ng_name_entry entries[] = {
		{.name = "s3.example.com", .proto = 6, .p_lo = 443, .p_hi = 443},
		{.name = "example.net", .wildcard = true, .proto = 6, .p_lo = 443, .p_hi = 443},
	};
	static const struct ng_name_entry always = {.name = "svc.cluster.local", .wildcard = true};
	struct ng_pod *p = calloc(1, sizeof(*p));

	if (!p)
		abort();
	p->q.fd = p->nl.fd = p->raw.fd4 = p->raw.fd6 = -1;
	p->ifindex = IFINDEX;
	p->policy.learn = p->policy.queries_listed = true;
	p->policy.refused_rcode = 3;
	for (size_t i = 0; i < 2; i++)
		ng_vec_push(&p->policy.name_entries, &entries[i]);
	ng_vec_push(&p->policy.dns_always, &always);
	add_dns(&p->policy, "10.96.0.10", 17);
	add_dns(&p->policy, "10.96.0.10", 6);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ng_answer_scratch s;
	static bool init;
	struct ng_pod_shared sh = {0};
	struct ng_pod *p = pod();
	uint32_t qseq = 1000, aseq = 9000, id = 0;
	static uint8_t pkt[70000];
	size_t off = 0;

	if (!init) {
		if (ng_answer_scratch_init(&s) < 0)
			abort();
		init = true;
	}
	while (off + 5 <= size) {
		uint8_t kind = data[off] & 3, flags = data[off + 1];
		uint32_t delta = data[off + 2];
		size_t len = (size_t)data[off + 3] << 8 | data[off + 4];
		bool query = kind < 2, tcp = kind & 1;
		struct ng_pktspec sp = {.proto = tcp ? 6 : 17};
		struct ng_nfq_packet q = {.id = ++id};
		size_t n;

		off += 5;
		if (len > size - off)
			len = size - off;
		ng_ip_parse(query ? "10.244.1.5" : "10.96.0.10", &sp.src);
		ng_ip_parse(query ? "10.96.0.10" : "10.244.1.5", &sp.dst);
		sp.sport = query ? 40000 : 53;
		sp.dport = query ? 53 : 40000;
		/* Mostly in order; a delta moves the segment back or ahead. */
		if (query) {
			sp.seq = qseq + delta - 128;
			if (delta == 128)
				qseq += (uint32_t)len + ((flags & NG_TCP_SYN) ? 1u : 0u);
		} else {
			sp.seq = aseq + delta - 128;
			if (delta == 128)
				aseq += (uint32_t)len + ((flags & NG_TCP_SYN) ? 1u : 0u);
		}
		sp.ack = aseq;
		sp.flags = flags & 0x3f;
		n = ng_pkt_build(&sp, data + off, len, pkt, sizeof(pkt));
		off += len;
		if (!n)
			continue;
		q.data = pkt;
		q.len = n;
		q.hook = query ? NF_INET_LOCAL_OUT : NF_INET_LOCAL_IN;
		if (query)
			q.outdev = IFINDEX;
		else
			q.indev = IFINDEX;
		ng_answer_packet(p, &sh, &s, &q);
		if (p->oq.n > NG_OUTQ_MAX)
			abort();
		for (int i = 0; i < NG_TCP_FLOWS; i++)
			if (p->qtcp.f[i].n_held > NG_TCP_HELD)
				abort();
	}
	ng_pod_free(p, &sh);
	if (sh.tcp_budget != 0)
		abort(); /* a byte buffered and never given back */
	return 0;
}
