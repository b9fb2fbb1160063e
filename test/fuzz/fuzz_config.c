/* Fuzz target: the plugin entry parser and validator (any JSON). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct ng_config cfg;
	struct ng_err err;

	if (!root)
		return 0;
	ng_config_parse(root, &cfg, &err);
	ng_config_free(&cfg);
	json_decref(root);
	return 0;
}
