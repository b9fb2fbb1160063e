#include "base/json_util.h"

#include <string.h>

int ng_json_check_object(const json_t *v, const char *path, const char *const allowed[], struct ng_err *err)
{
	const char *k;
	json_t *val;

	if (!json_is_object(v))
		return ng_fail(err, NG_E_CONFIG, "%s: must be an object", *path ? path : "configuration");
	json_object_foreach((json_t *)v, k, val) {
		bool known = false;

		for (int i = 0; allowed[i]; i++)
			if (strcmp(k, allowed[i]) == 0)
				known = true;
		if (!known)
			return ng_fail(err, NG_E_CONFIG, "%s%s%s: unknown key", path, *path ? "." : "", k);
	}
	return 0;
}

int ng_json_opt_bool(const json_t *obj, const char *key, const char *path, bool dflt, bool *out,
		     struct ng_err *err)
{
	const json_t *v = json_object_get(obj, key);

	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return ng_fail(err, NG_E_CONFIG, "%s: must be true or false", path);
	*out = json_is_true(v);
	return 0;
}

const char *ng_json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ng_json_list_limit(const json_t *list, const char *path, size_t max, struct ng_err *err)
{
	if (json_array_size(list) <= max)
		return 0;
	return ng_fail(err, NG_E_CONFIG, "%s: %zu entries, more than %zu (README \"Limits\")", path,
		       json_array_size(list), max);
}
