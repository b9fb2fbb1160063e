#include "spec/cniversion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kindnet and flannel still write 0.3.1; CHECK exists from 0.4.0; GC and
 * STATUS from 1.1.0. */
const char *const ng_supported_versions[] = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", NG_CNI_VERSION_LATEST, NULL};

bool ng_version_supported(const char *v)
{
	for (int i = 0; ng_supported_versions[i]; i++)
		if (strcmp(v, ng_supported_versions[i]) == 0)
			return true;
	return false;
}

int ng_version_cmp(const char *a, const char *b)
{
	/* Both are cniVersion strings checked against the supported list (or
	 * constants); a malformed part reads as 0. */
	for (int i = 0; i < 3; i++) {
		char *ea, *eb;
		unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		a = *ea == '.' ? ea + 1 : ea;
		b = *eb == '.' ? eb + 1 : eb;
	}
	return 0;
}

const char *ng_versions_text(void)
{
	static char text[64];

	if (!text[0])
		for (int i = 0; ng_supported_versions[i]; i++) {
			size_t o = strlen(text);

			snprintf(text + o, sizeof(text) - o, "%s%s", i ? ", " : "", ng_supported_versions[i]);
		}
	return text;
}
