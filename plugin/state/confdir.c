#include "state/confdir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A name runtimes read as a network config: libcni's ConfFiles takes these
 * three extensions. */
bool ng_is_conf_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	const char *e = dot ? dot : "";

	return !strcmp(e, ".conf") || !strcmp(e, ".conflist") || !strcmp(e, ".json");
}

/* The same choice as libcni's ConfFiles and the installer (installplan.c):
 * every entry whose extension (from the last dot, so hidden files too) is
 * .conf, .conflist or .json, except directories, first by byte order. */
int ng_conffile_active(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *keep = NULL;
	int rc = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct stat st;

		if (!ng_is_conf_name(de->d_name) || (keep && strcmp(de->d_name, keep) >= 0))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode))
			continue;
		free(keep);
		keep = strdup(de->d_name);
		if (!keep)
			break;
	}
	closedir(d);
	if (keep) {
		snprintf(out, len, "%s/%s", dir, keep);
		rc = 0;
	}
	free(keep);
	return rc;
}

static json_t *with_header(json_t *entry, const json_t *list)
{
	json_t *e = json_deep_copy(entry);

	if (!e)
		return NULL;
	if (list && json_object_get(list, "name"))
		json_object_set(e, "name", json_object_get(list, "name"));
	if (list && json_object_get(list, "cniVersion"))
		json_object_set(e, "cniVersion", json_object_get(list, "cniVersion"));
	return e;
}

json_t *ng_conffile_entry(const char *path, char *used, size_t used_len, struct ng_err *err)
{
	struct stat st;
	json_error_t je;
	json_t *root, *plugins, *p, *out = NULL;
	size_t i;

	snprintf(used, used_len, "%s", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && ng_conffile_active(path, used, used_len) < 0) {
		ng_fail(err, NG_E_CONFIG, "%s: no CNI configuration in this directory", path);
		return NULL;
	}
	root = json_load_file(used, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		ng_fail(err, NG_E_DECODE, "%s: %s", used, je.text);
		return NULL;
	}
	plugins = json_object_get(root, "plugins");
	if (json_is_array(plugins)) {
		json_array_foreach(plugins, i, p) {
			const char *type = json_string_value(json_object_get(p, "type"));

			if (type && !strcmp(type, NG_PLUGIN_TYPE))
				out = with_header(p, root);
		}
		if (!out)
			ng_fail(err, NG_E_CONFIG, "%s: no %s entry in this conflist", used, NG_PLUGIN_TYPE);
	} else {
		const char *type = json_string_value(json_object_get(root, "type"));

		if (type && !strcmp(type, NG_PLUGIN_TYPE))
			out = with_header(root, NULL);
		else
			ng_fail(err, NG_E_CONFIG, "%s: not a %s entry nor a conflist holding one", used,
				NG_PLUGIN_TYPE);
	}
	json_decref(root);
	return out;
}
