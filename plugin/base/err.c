#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ng_fail(struct ng_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void ng_err_details(struct ng_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->details, sizeof(err->details), fmt, ap);
	va_end(ap);
}

void ng_err_prefix(struct ng_err *err, const char *fmt, ...)
{
	char prefix[256], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Bounded concatenation: a long message loses its tail, never its head. */
	size_t pl = strlen(prefix); /* < sizeof(prefix) < sizeof(err->msg) */
	size_t ol = strnlen(old, sizeof(err->msg) - 1 - pl);
	memcpy(err->msg, prefix, pl);
	memcpy(err->msg + pl, old, ol);
	err->msg[pl + ol] = '\0';
}
