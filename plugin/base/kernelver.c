#include "base/kernelver.h"

#include <ctype.h>
#include <stdlib.h>

bool ng_kernel_at_least(const char *release, int major, int minor)
{
	char *end;
	long ma, mi;

	if (!release || !isdigit((unsigned char)release[0]))
		return false;
	ma = strtol(release, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return false;
	mi = strtol(end + 1, &end, 10);
	return ma > major || (ma == major && mi >= minor);
}
