/* Pod objects, lists and watch lines of the Kubernetes API. See kpod.h. */
#include "agent/kpod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/annotations.h"

/* A string field of obj into buf; false when absent, not a string, or too
 * long (never truncated: a cut name would name another pod). */
static bool str_field(const json_t *obj, const char *key, char *buf, size_t len)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_string(v) || json_string_length(v) >= len ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return false;
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return true;
}

static bool declares_gate(const json_t *spec)
{
	const json_t *gates = json_object_get(spec, "readinessGates"), *g;
	size_t i;

	json_array_foreach(gates, i, g) {
		const char *t = json_string_value(json_object_get(g, "conditionType"));

		if (t && !strcmp(t, NG_KPOD_CONDITION))
			return true;
	}
	return false;
}

int ng_kpod_from_json(const json_t *obj, struct ng_kpod *out, struct ng_err *err)
{
	const json_t *meta = json_object_get(obj, "metadata"), *ann, *eg,
		     *spec = json_object_get(obj, "spec");
	const char *k;
	const json_t *v;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(obj) || !json_is_object(meta))
		return ng_fail(err, NG_E_DECODE, "a pod object without metadata");
	if (!str_field(meta, "name", out->name, sizeof(out->name)) || !out->name[0] ||
	    !str_field(meta, "namespace", out->ns, sizeof(out->ns)) || !out->ns[0])
		return ng_fail(err, NG_E_DECODE, "a pod object without a name or namespace");
	str_field(meta, "uid", out->uid, sizeof(out->uid));
	str_field(meta, "resourceVersion", out->rv, sizeof(out->rv));
	if (json_is_object(spec))
		str_field(spec, "nodeName", out->node, sizeof(out->node));
	out->gate = json_is_object(spec) && declares_gate(spec);
	ann = json_object_get(meta, "annotations");
	out->readable = true;
	if (ann && !json_is_null(ann)) {
		if (!json_is_object(ann)) {
			out->readable = false;
			return 0;
		}
		json_object_foreach((json_t *)ann, k, v) {
			if (!json_is_string(v))
				out->readable = false;
		}
		eg = json_object_get(ann, NG_ANN_EGRESS);
		if (eg && out->readable) {
			if (json_string_length(eg) > NG_ANN_VALUE_MAX ||
			    strlen(json_string_value(eg)) != json_string_length(eg)) {
				out->readable = false;
				return 0;
			}
			out->egress = strdup(json_string_value(eg));
			if (!out->egress)
				return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	return 0;
}

void ng_kpod_free(struct ng_kpod *p)
{
	free(p->egress);
	p->egress = NULL;
}

void ng_kpod_vec_free(ng_kpod_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		ng_kpod_free(&v->v[i]);
	ng_vec_free(v);
}

int ng_kpod_list_parse(const char *buf, size_t len, ng_kpod_vec *out, char rv[NG_KPOD_RV_MAX],
		       size_t *skipped, struct ng_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je), *items, *it;
	size_t i;

	*skipped = 0;
	rv[0] = '\0';
	if (!json_is_object(root)) {
		json_decref(root);
		return ng_fail(err, NG_E_DECODE, "the pod list is not a JSON object%s%.100s",
			       root ? "" : ": ", root ? "" : je.text);
	}
	items = json_object_get(root, "items");
	if (!str_field(json_object_get(root, "metadata"), "resourceVersion", rv, NG_KPOD_RV_MAX) || !rv[0] ||
	    (!json_is_array(items) && !json_is_null(items))) {
		json_decref(root);
		return ng_fail(err, NG_E_DECODE, "the pod list has no resourceVersion or no items");
	}
	json_array_foreach(items, i, it) {
		struct ng_kpod p;
		struct ng_err e2 = {0};

		if (ng_kpod_from_json(it, &p, &e2) < 0) {
			(*skipped)++;
			continue;
		}
		if (ng_vec_push(out, &p) < 0) {
			ng_kpod_free(&p);
			json_decref(root);
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	json_decref(root);
	return 0;
}

static const char *const type_names[] = {
	[NG_KW_ADDED] = "ADDED",       [NG_KW_MODIFIED] = "MODIFIED", [NG_KW_DELETED] = "DELETED",
	[NG_KW_BOOKMARK] = "BOOKMARK", [NG_KW_ERROR] = "ERROR",
};

int ng_kwatch_parse(const char *line, size_t len, struct ng_kwatch_event *out, struct ng_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je), *obj;
	const char *t;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root)) {
		json_decref(root);
		return ng_fail(err, NG_E_DECODE, "a watch line that is not a JSON object");
	}
	t = json_string_value(json_object_get(root, "type"));
	obj = json_object_get(root, "object");
	out->type = NG_KW_ERROR;
	rc = -1;
	for (size_t i = 0; t && i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(t, type_names[i])) {
			out->type = (enum ng_kwatch_type)i;
			rc = 0;
		}
	if (rc < 0 || !json_is_object(obj)) {
		/* The message first: `t` lives in root. */
		ng_fail(err, NG_E_DECODE, "a watch line with type %.20s%s", t ? t : "(none)",
			json_is_object(obj) ? "" : " and no object");
		json_decref(root);
		return -1;
	}
	switch (out->type) {
	case NG_KW_ERROR: {
		const json_t *code = json_object_get(obj, "code");
		const char *msg = json_string_value(json_object_get(obj, "message"));

		out->code = json_is_integer(code) ? (int)json_integer_value(code) : 0;
		snprintf(out->message, sizeof(out->message), "%s", msg ? msg : "(no message)");
		break;
	}
	case NG_KW_BOOKMARK:
		if (!str_field(json_object_get(obj, "metadata"), "resourceVersion", out->pod.rv,
			       sizeof(out->pod.rv)) ||
		    !out->pod.rv[0])
			rc = ng_fail(err, NG_E_DECODE, "a bookmark without a resourceVersion");
		break;
	default: rc = ng_kpod_from_json(obj, &out->pod, err); break;
	}
	json_decref(root);
	if (rc < 0)
		ng_kwatch_event_free(out);
	return rc;
}

void ng_kwatch_event_free(struct ng_kwatch_event *e)
{
	ng_kpod_free(&e->pod);
}
