#include "node/verify_config.h"

#include <string.h>

#include "spec/cniversion.h"
#include "state/confdir.h"
#include "policy/metadata.h"

/* Loads --config (or the node's active conflist when it holds our entry)
 * and --annotations. Without a config the policy comparison and the DNS
 * probes are skipped, and the built-in metadata list is probed. */
int ng_verify_load_config(struct run *r)
{
	struct ng_err err = {0};
	const char *path = r->o->config;
	bool explicit = path != NULL;

	if (!path)
		path = NG_DEFAULT_CONF_DIR;
	/* Until a config parses, probe the built-in metadata list. */
	ng_config_builtin_metadata(&r->cfg, &err);
	r->cfg_json = ng_conffile_entry(path, r->cfg_path, sizeof(r->cfg_path), &err);
	if (!r->cfg_json) {
		if (explicit) {
			ng_vrow(r, "configuration", NG_FAIL, -1, "%s", err.msg);
			return -1;
		}
		ng_vrow(r, "configuration", NG_SKIP, -1,
			"no --config and no %s entry in %s: the policy is not compared", NG_PLUGIN_TYPE,
			NG_DEFAULT_CONF_DIR);
		return 0;
	}
	if (!json_object_get(r->cfg_json, "cniVersion"))
		json_object_set_new(r->cfg_json, "cniVersion", json_string(NG_CNI_VERSION_LATEST));
	if (r->o->annotations) {
		json_error_t je;
		json_t *ann = json_loads(r->o->annotations, 0, &je), *rc = json_object();

		if (!ann) {
			json_decref(rc);
			ng_vrow(r, "annotations", NG_FAIL, -1, "--annotations is not JSON: %s", je.text);
			return -1;
		}
		json_object_set_new(rc, NG_ANNOTATIONS_CAP, ann);
		json_object_set_new(r->cfg_json, "runtimeConfig", rc);
	}
	ng_config_free(&r->cfg);
	if (ng_config_parse(r->cfg_json, &r->cfg, &err) < 0 ||
	    ng_annotations_parse(r->cfg_json, &r->cfg, &r->ann, &err) < 0) {
		ng_vrow(r, "configuration", NG_FAIL, -1, "%s: %s", r->cfg_path, err.msg);
		ng_config_free(&r->cfg);
		memset(&r->cfg, 0, sizeof(r->cfg));
		ng_config_builtin_metadata(&r->cfg, &err);
		return -1;
	}
	r->have_cfg = true;
	ng_vrow(r, "configuration", NG_INFO, -1, "%s", r->cfg_path);
	return 0;
}
