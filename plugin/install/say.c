#include "install/say.h"

#include <stdarg.h>
#include <stdio.h>

#include <jansson.h>

#include "base/decision_log.h"

/* One JSON line on stderr, the one log schema (README "Logs": ts, level,
 * msg, plugin, component "installer", event "install"). Falls back to plain text only when out of memory. */
static void say(const char *level, const char *fmt, va_list ap)
{
	char msg[2048];
	json_t *o;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	o = ng_log_head(level, msg);
	if (o) {
		json_object_set_new(o, "component", json_string("installer"));
		json_object_set_new(o, "event", json_string("install"));
	}
	if (!o || ng_log_write_line(2, o) < 0)
		fprintf(stderr, "boxxkite-netguard: %s: %s\n", level, msg);
	json_decref(o);
}

void ng_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("info", fmt, ap);
	va_end(ap);
}

void ng_say_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warn", fmt, ap);
	va_end(ap);
}

void ng_say_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("error", fmt, ap);
	va_end(ap);
}
