/* Fuzz target: CNI_ARGS. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec/cni_args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct ng_cni_args a;
	struct ng_err err;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	ng_cni_args_parse(s, &a, &err);
	free(s);
	return 0;
}
