/* Fuzz target: destination syntax, in both modes, and containment against
 * a few envelopes. Invariant: an entry always lies within itself. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/dest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const envelopes[] = {"10.0.0.0/8:1-65535", "*.example.com:443",
						"udp://[fd00::/16]:53"};
	char *s = malloc(size + 1);
	struct ng_dest d, e;
	struct ng_err err;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (int wild = 0; wild < 2; wild++) {
		if (ng_dest_parse(s, wild, 7, &d, &err) != 0)
			continue;
		if (!ng_dest_within(&d, &d))
			__builtin_trap();
		for (size_t i = 0; i < 3; i++)
			if (ng_dest_parse(envelopes[i], true, 7, &e, &err) == 0)
				(void)ng_dest_within(&d, &e);
	}
	free(s);
	return 0;
}
