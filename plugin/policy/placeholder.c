/* The CHANGEME refusal: a template value must never reach a node. */
#include "policy/config.h"

#include <stdio.h>
#include <string.h>

/* Recursion depth is bounded by jansson's own nesting limit (2048). */
/* A path to a JSON value as a chain of segments on the stack: formatted
 * only when a placeholder is found, not for every value of a long list. */
struct json_path {
	const struct json_path *up;
	const char *key; /* object member, or NULL for an array index */
	size_t index;
};

// NOLINTNEXTLINE(misc-no-recursion)
static void format_path(const struct json_path *p, char *buf, size_t len)
{
	size_t n;

	buf[0] = '\0';
	if (!p)
		return;
	format_path(p->up, buf, len);
	n = strlen(buf);
	if (p->key)
		snprintf(buf + n, len - n, "%s%s", n ? "." : "", p->key);
	else
		snprintf(buf + n, len - n, "[%zu]", p->index);
}

/* Recursion depth is bounded by jansson's own nesting limit (2048). */
// NOLINTNEXTLINE(misc-no-recursion)
static int refuse_in(const json_t *v, const struct json_path *here, const char *root, int code,
		     struct ng_err *err)
{
	char path[512];

	if (json_is_string(v)) {
		if (!strstr(json_string_value(v), "CHANGEME"))
			return 0;
		format_path(here, path, sizeof(path));
		return ng_fail(err, code,
			       "%s%s: holds the placeholder CHANGEME; replace it with a real value", root,
			       path);
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *val;

		json_object_foreach((json_t *)v, k, val) {
			struct json_path sub = {here, k, 0};

			if (strstr(k, "CHANGEME")) {
				format_path(&sub, path, sizeof(path));
				return ng_fail(err, code, "%s%s: key holds the placeholder CHANGEME", root,
					       path);
			}
			if (refuse_in(val, &sub, root, code, err) < 0)
				return -1;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *val;

		json_array_foreach(v, i, val) {
			struct json_path sub = {here, NULL, i};

			if (refuse_in(val, &sub, root, code, err) < 0)
				return -1;
		}
	}
	return 0;
}

int ng_refuse_placeholders(const json_t *v, const char *path, int code, struct ng_err *err)
{
	return refuse_in(v, NULL, path, code, err);
}
