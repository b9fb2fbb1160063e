#include "install/say.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/decision_log.h"

void ng_say(const char *fmt, ...)
{
	char ts[32];
	va_list ap;

	ng_utc_now(ts, sizeof(ts));
	fprintf(stderr, "%s boxxkite-netguard: ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
