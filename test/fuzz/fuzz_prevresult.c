/* Fuzz target: prevResult parsing and conversion to every version. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/cniversion.h"
#include "spec/prevresult.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *prev = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct ng_prev p;
	struct ng_err err;

	if (!prev)
		return 0;
	ng_prev_parse(prev, &p, &err);
	ng_prev_free(&p);
	for (int i = 0; ng_supported_versions[i]; i++)
		json_decref(ng_prev_convert(prev, ng_supported_versions[i], &err));
	json_decref(prev);
	return 0;
}
