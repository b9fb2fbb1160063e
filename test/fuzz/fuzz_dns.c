/* Fuzz target: DNS responses as they come back from the node's resolver. */
#include <stddef.h>
#include <stdint.h>

#include "policy/dnsparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_resolved_name out = {0};

	ng_dns_parse_answers(data, size, 1, &out);
	ng_dns_parse_answers(data, size, 28, &out);
	ng_vec_free(&out.answers);
	return 0;
}
