#include "base/cliarg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

bool ng_arg_long(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "boxxkite-netguard %s: --%s wants an integer from %ld to %ld, not \"%s\"\n",
			cmd, opt, lo, hi, s);
		return false;
	}
	*out = v;
	return true;
}

bool ng_arg_double(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "boxxkite-netguard %s: --%s wants a number from %g to %g, not \"%s\"\n", cmd,
			opt, lo, hi, s);
		return false;
	}
	*out = v;
	return true;
}
