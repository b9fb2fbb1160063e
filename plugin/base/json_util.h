/* Small jansson helpers shared by the config, annotation and prevResult
 * parsers: strict object shape checks with messages naming the key. */
#ifndef NG_JSON_UTIL_H
#define NG_JSON_UTIL_H

#include <jansson.h>
#include <stdbool.h>

#include "base/err.h"

/* Fails (code 7) unless v is an object whose keys are all in `allowed`
 * (NULL-terminated). `path` names v in messages ("" for the top level). */
int ng_json_check_object(const json_t *v, const char *path, const char *const allowed[], struct ng_err *err);

/* Reads an optional boolean; absent leaves *out = dflt. */
int ng_json_opt_bool(const json_t *obj, const char *key, const char *path, bool dflt, bool *out,
		     struct ng_err *err);

/* Optional string member: NULL when absent or not a string. */
const char *ng_json_str(const json_t *obj, const char *key);

/* Fails (code 7) when the JSON array `list` at `path` has more than `max`
 * entries (README "Limits"). */
int ng_json_list_limit(const json_t *list, const char *path, size_t max, struct ng_err *err);

#endif
