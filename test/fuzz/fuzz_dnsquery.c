/* Fuzz target: a pod's DNS queries (dns.queries "listed"): the query
 * parser, the policy's decision (a name, a wildcard, an always-allowed
 * suffix) and the refusal built from the query's own bytes, which must fit
 * and echo exactly the question the parser found. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/dnsquery.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ng_policy *policy(void)
{
	static struct ng_policy p;
	static bool made;
	static const struct ng_name_entry entries[] = {
		{.name = "s3.example.com", .proto = 6, .p_lo = 443, .p_hi = 443},
		{.name = "example.net", .wildcard = true, .proto = 6, .p_lo = 400, .p_hi = 500},
	};
	static const struct ng_name_entry always = {.name = "svc.cluster.local", .wildcard = true};

	if (!made) {
		p.queries_listed = true;
		p.refused_rcode = 3;
		for (size_t i = 0; i < 2; i++)
			ng_vec_push(&p.name_entries, &entries[i]);
		ng_vec_push(&p.dns_always, &always);
		made = true;
	}
	return &p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_dns_query q;
	uint8_t out[512];
	enum ng_dnsq_verdict v = ng_dns_query_judge(policy(), data, size, &q);
	size_t n = ng_dns_refusal(data, size, &q, v, 3, out, sizeof(out));

	if (v == NG_DNSQ_OK && (q.q_len == 0 || q.q_off + q.q_len > size))
		abort();
	if (n && (n < 12 || (n > 12 && memcmp(out + 12, data + q.q_off, n - 12) != 0)))
		abort();
	if (n && (out[0] != data[0] || out[1] != data[1] || !(out[2] & 0x80)))
		abort();
	return 0;
}
