#include "install/conflist.h"

#include <stdlib.h>
#include <string.h>

#include "policy/config.h"

bool ng_is_our_plugin(const json_t *plugin)
{
	const json_t *t = json_object_get(plugin, "type");

	return json_is_string(t) && strcmp(json_string_value(t), NG_PLUGIN_TYPE) == 0;
}

size_t ng_conflist_count_ours(const json_t *list)
{
	size_t i, n = 0;
	json_t *p;

	json_array_foreach(json_object_get(list, "plugins"), i, p)
		n += ng_is_our_plugin(p);
	return n;
}

int ng_conf_parse_text(const char *text, size_t len, json_t **out, struct ng_err *err)
{
	json_error_t je;
	json_t *j;

	*out = NULL;
	if (len > NG_CONF_MAX)
		return ng_fail(err, NG_E_DECODE, "larger than %zu bytes", NG_CONF_MAX);
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return ng_fail(err, NG_E_DECODE, "not valid JSON: %s (line %d, column %d)", je.text, je.line,
			       je.column);
	if (!json_is_object(j)) {
		json_decref(j);
		return ng_fail(err, NG_E_DECODE, "not a JSON object");
	}
	*out = j;
	return 0;
}

int ng_entry_parse(const char *text, size_t len, json_t **out, struct ng_err *err)
{
	/* Keys the runtime fills in on every call: a value here would be
	 * overwritten without a word, so it is a mistake in the entry. */
	static const struct {
		const char *key, *why;
	} runtime_keys[] = {
		{"name", "the runtime sets it from the conflist"},
		{"cniVersion", "the runtime sets it from the conflist"},
		{"prevResult", "the runtime sets it on each call"},
		{"runtimeConfig", "the runtime sets it on each call"},
	};
	json_t *j;

	if (ng_conf_parse_text(text, len, &j, err) < 0) {
		err->code = NG_E_CONFIG;
		ng_err_prefix(err, "plugin entry: ");
		return -1;
	}
	if (!ng_is_our_plugin(j)) {
		json_decref(j);
		return ng_fail(err, NG_E_CONFIG, "plugin entry: type must be \"%s\"", NG_PLUGIN_TYPE);
	}
	for (size_t i = 0; i < sizeof(runtime_keys) / sizeof(runtime_keys[0]); i++) {
		if (json_object_get(j, runtime_keys[i].key)) {
			json_decref(j);
			return ng_fail(err, NG_E_CONFIG, "plugin entry: remove \"%s\": %s",
				       runtime_keys[i].key, runtime_keys[i].why);
		}
	}
	*out = j;
	return 0;
}

int ng_entry_validate(const json_t *entry, const char *name, const char *cni_version, struct ng_err *err)
{
	struct ng_config cfg;
	json_t *e = json_deep_copy(entry);
	int rc;

	if (!e)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	/* What libcni's injection does before exec'ing the plugin. */
	if (json_object_set_new(e, "name", json_string(name)) < 0 ||
	    json_object_set_new(e, "cniVersion", json_string(cni_version)) < 0) {
		json_decref(e);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	rc = ng_config_parse(e, &cfg, err);
	ng_config_free(&cfg);
	json_decref(e);
	if (rc < 0)
		ng_err_prefix(err, "plugin entry refused (the plugin would refuse it on every ADD): ");
	return rc;
}

static const char *str_member(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ng_conflist_check(const json_t *list, const char *file, struct ng_err *err)
{
	const json_t *plugins = json_object_get(list, "plugins"), *p;
	size_t i;

	if (!json_is_object(list))
		return ng_fail(err, NG_E_CONFIG, "%s: not a JSON object", file);
	if (!str_member(list, "name"))
		return ng_fail(err, NG_E_CONFIG, "%s: no \"name\" string (runtimes refuse such a list)",
			       file);
	if (!str_member(list, "cniVersion"))
		return ng_fail(
			err, NG_E_CONFIG,
			"%s: no \"cniVersion\" string; boxxkite-netguard needs one to check it supports it",
			file);
	if (!json_is_array(plugins) || json_array_size(plugins) == 0)
		return ng_fail(err, NG_E_CONFIG, "%s: \"plugins\" must be a non-empty array", file);
	json_array_foreach(plugins, i, p) {
		if (!json_is_object(p) || !str_member(p, "type"))
			return ng_fail(err, NG_E_CONFIG,
				       "%s: plugins[%zu] is not an object with a \"type\" string", file, i);
	}
	return 0;
}

json_t *ng_conflist_strip(const json_t *list, size_t *removed)
{
	json_t *out = json_deep_copy(list), *plugins, *kept;
	size_t i;
	json_t *p;

	*removed = 0;
	if (!out)
		return NULL;
	plugins = json_object_get(out, "plugins");
	if (!json_is_array(plugins))
		return out;
	kept = json_array();
	if (!kept) {
		json_decref(out);
		return NULL;
	}
	json_array_foreach(plugins, i, p) {
		if (ng_is_our_plugin(p))
			(*removed)++;
		else if (json_array_append(kept, p) < 0)
			goto oom;
	}
	/* Replacing the value keeps the key's position in the object. */
	if (json_object_set_new(out, "plugins", kept) < 0) {
		kept = NULL;
		goto oom;
	}
	return out;
oom:
	json_decref(kept);
	json_decref(out);
	return NULL;
}

/* Exactly one entry of ours, equal to `entry`, somewhere after plugins[0]. */
static bool already_merged(const json_t *list, const json_t *entry)
{
	const json_t *plugins = json_object_get(list, "plugins"), *p;
	size_t i, ours = 0;
	bool good = false;

	json_array_foreach(plugins, i, p) {
		if (ng_is_our_plugin(p)) {
			ours++;
			good = i >= 1 && json_equal((json_t *)p, (json_t *)entry);
		}
	}
	return ours == 1 && good;
}

int ng_conflist_merge(const json_t *list, const char *file, const json_t *entry, json_t **out, bool *changed,
		      struct ng_err *err)
{
	json_t *res, *plugins;
	size_t removed;

	if (ng_conflist_check(list, file, err) < 0)
		return -1;
	if (ng_entry_validate(entry, str_member(list, "name"), str_member(list, "cniVersion"), err) < 0)
		return NG_ENTRY_REFUSED;
	if (already_merged(list, entry)) {
		*out = json_deep_copy(list);
		*changed = false;
		return *out ? 0 : ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	res = ng_conflist_strip(list, &removed);
	if (!res)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	plugins = json_object_get(res, "plugins");
	if (json_array_size(plugins) == 0) {
		json_decref(res);
		return ng_fail(
			err, NG_E_CONFIG,
			"%s: holds no plugin but boxxkite-netguard; it needs a primary plugin to chain after",
			file);
	}
	if (json_array_append_new(plugins, json_deep_copy(entry)) < 0) {
		json_decref(res);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	*out = res;
	*changed = true;
	return 0;
}

int ng_conf_to_conflist(const json_t *conf, const char *source, const json_t *entry, json_t **out,
			struct ng_err *err)
{
	const char *name = str_member(conf, "name"), *version = str_member(conf, "cniVersion");
	json_t *list;
	bool changed;
	int rc;

	if (!json_is_object(conf))
		return ng_fail(err, NG_E_CONFIG, "%s: not a JSON object", source);
	if (!str_member(conf, "type")) {
		/* containerd refuses such a file; CRI-O skips it. Neither runs it
		 * as a list, so neither would run our entry. */
		return ng_fail(err, NG_E_CONFIG,
			       "%s: no \"type\" string%s; runtimes do not read this file as a network config",
			       source,
			       json_object_get(conf, "plugins") ? " (a plugin list in a .conf/.json file)"
								: "");
	}
	if (ng_is_our_plugin(conf))
		return ng_fail(err, NG_E_CONFIG,
			       "%s: its only plugin is boxxkite-netguard; it needs a primary plugin", source);
	if (!name || !version)
		return ng_fail(err, NG_E_CONFIG,
			       "%s: needs \"name\" and \"cniVersion\" strings to become a conflist", source);
	/* Key order as libcni writes it, with our marker before the plugins. */
	list = json_pack("{s:s, s:s, s:s, s:[O]}", "cniVersion", version, "name", name, NG_GENERATED_KEY,
			 source, "plugins", conf);
	if (!list)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	rc = ng_conflist_merge(list, source, entry, out, &changed, err);
	json_decref(list);
	return rc;
}

char *ng_conf_dump(const json_t *j, size_t *len)
{
	char *s = json_dumps(j, JSON_INDENT(2)), *t;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	*len = n + 1;
	return t;
}
