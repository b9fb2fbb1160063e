/* A pod's grant annotation in its recorded ADD stdin. See recgrants.h. */
#include "state/recgrants.h"

#include "policy/annotations.h"

const char *ng_recgrants_get(const json_t *conf)
{
	const json_t *rc = json_object_get(conf, "runtimeConfig");
	const json_t *ann = json_object_get(rc, NG_CRI_ANNOTATIONS);

	return json_string_value(json_object_get(ann, NG_ANN_EGRESS));
}

int ng_recgrants_set(json_t *c, const char *egress)
{
	json_t *rc, *ann;

	rc = json_object_get(c, "runtimeConfig");
	if (!json_is_object(rc)) {
		if (!egress)
			return 0; /* nothing to remove */
		rc = json_object();
		if (!rc || json_object_set_new(c, "runtimeConfig", rc) < 0)
			return -1;
	}
	ann = json_object_get(rc, NG_CRI_ANNOTATIONS);
	if (!json_is_object(ann)) {
		if (!egress)
			return 0;
		ann = json_object();
		if (!ann || json_object_set_new(rc, NG_CRI_ANNOTATIONS, ann) < 0)
			return -1;
	}
	if (!egress) {
		json_object_del(ann, NG_ANN_EGRESS);
		return 0;
	}
	return json_object_set_new(ann, NG_ANN_EGRESS, json_string(egress));
}

json_t *ng_recgrants_with(const json_t *conf, const char *egress)
{
	json_t *c = json_deep_copy(conf);

	if (c && ng_recgrants_set(c, egress) < 0) {
		json_decref(c);
		c = NULL;
	}
	return c;
}
