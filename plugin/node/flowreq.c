/* The agent socket's requests. See flowreq.h. */
#include "node/flowreq.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_util.h"

int ng_flow_req_line(const struct ng_flow_req *r, char *buf, size_t len)
{
	json_t *o = json_object();
	char pod[NG_FLOW_NS_MAX + NG_FLOW_NAME_MAX + 2];
	char *s;
	int n;

	if (!o)
		return -1;
	json_object_set_new(o, "op", json_string(r->op == NG_FLOW_OP_NAMES ? "names" : "observe"));
	if (r->filter.pod) {
		snprintf(pod, sizeof(pod), "%s/%s", r->filter.ns, r->filter.name);
		json_object_set_new(o, "pod", json_string(pod));
	}
	if (r->op == NG_FLOW_OP_OBSERVE) {
		if (r->filter.category[0])
			json_object_set_new(o, "category", json_string(r->filter.category));
		json_object_set_new(o, "history", json_boolean(r->history));
		json_object_set_new(o, "since_ms", json_integer((json_int_t)r->filter.since_ms));
		json_object_set_new(o, "follow", json_boolean(r->follow));
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return -1;
	n = snprintf(buf, len, "%s\n", s);
	free(s);
	return n > 0 && (size_t)n < len ? n : -1;
}

int ng_flow_req_parse(const char *line, size_t len, struct ng_flow_req *r, struct ng_err *err)
{
	static const char *const keys[] = {"op", "pod", "category", "history", "since_ms", "follow", NULL};
	json_error_t je;
	json_t *o, *v;
	const char *op;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (len >= NG_FLOW_REQ_MAX)
		return ng_fail(err, NG_E_DECODE, "request: longer than %d bytes", NG_FLOW_REQ_MAX - 1);
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return ng_fail(err, NG_E_DECODE, "request: not JSON (%s)", je.text);
	if (ng_json_check_object(o, "request", keys, err) < 0)
		goto out;
	op = json_string_value(json_object_get(o, "op"));
	if (op && !strcmp(op, "names"))
		r->op = NG_FLOW_OP_NAMES;
	else if (!op || strcmp(op, "observe") != 0) {
		ng_fail(err, NG_E_DECODE, "request: op must be \"observe\" or \"names\"");
		goto out;
	}
	if ((v = json_object_get(o, "pod")) &&
	    (!json_is_string(v) || ng_flow_filter_pod(&r->filter, json_string_value(v), err) < 0)) {
		if (!json_is_string(v))
			ng_fail(err, NG_E_DECODE, "request: pod must be a string");
		goto out;
	}
	if ((v = json_object_get(o, "category")) &&
	    (!json_is_string(v) || ng_flow_filter_category(&r->filter, json_string_value(v), err) < 0)) {
		if (!json_is_string(v))
			ng_fail(err, NG_E_DECODE, "request: category must be a string");
		goto out;
	}
	if ((v = json_object_get(o, "since_ms")) && (!json_is_integer(v) || json_integer_value(v) < 0)) {
		ng_fail(err, NG_E_DECODE, "request: since_ms must be a count of ms");
		goto out;
	}
	r->filter.since_ms = v ? (int64_t)json_integer_value(v) : 0;
	if (ng_json_opt_bool(o, "history", "request.history", false, &r->history, err) < 0 ||
	    ng_json_opt_bool(o, "follow", "request.follow", false, &r->follow, err) < 0)
		goto out;
	rc = 0;
out:
	json_decref(o);
	return rc;
}
