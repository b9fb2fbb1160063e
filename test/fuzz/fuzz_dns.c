/* Fuzz target: the project's one DNS parser, on answers from the node's
 * resolver (ADD, "resolve") and from any pod's resolver (the agent,
 * "learn"), and the learner on top, with a policy holding a name, a
 * wildcard and a port range. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "policy/dnsparse.h"
#include "policy/learn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ng_policy *policy(void)
{
	static struct ng_policy p;
	static bool made;
	static const struct ng_name_entry entries[] = {
		{.name = "s3.example.com", .proto = 6, .p_lo = 443, .p_hi = 443},
		{.name = "example.net", .wildcard = true, .proto = 6, .p_lo = 400, .p_hi = 500},
	};
	static const struct ng_elem pieces[] = {
		{.proto = 6, .p_lo = 400, .p_hi = 442},
		{.proto = 6, .p_lo = 443, .p_hi = 443},
		{.proto = 6, .p_lo = 444, .p_hi = 500},
	};

	if (!made) {
		p.learn = true;
		p.min_name_ttl = 30;
		for (size_t i = 0; i < 2; i++)
			ng_vec_push(&p.name_entries, &entries[i]);
		for (size_t i = 0; i < 3; i++)
			ng_vec_push(&p.name_pieces, &pieces[i]);
		made = true;
	}
	return &p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ng_dns_msg *m;
	static struct ng_learn_result r;
	struct ng_resolved_name out = {0};

	if (!m && !(m = malloc(sizeof(*m))))
		return 0;
	ng_dns_parse_answers(data, size, 1, &out);
	ng_dns_parse_answers(data, size, 28, &out);
	ng_vec_free(&out.answers);
	if (ng_dns_parse(data, size, m) == 0)
		ng_learn(policy(), m, &r);
	return 0;
}
