#include "node/statusjson.h"

#include <string.h>

static json_t *pod_json(const struct ng_view_pod *p)
{
	json_t *o = json_object(), *names = json_array(), *denied = json_array(), *ac = json_object();

	json_object_set_new(o, "key", json_string(p->key));
	json_object_set_new(o, "namespace", json_string(p->ns));
	json_object_set_new(o, "pod", json_string(p->name));
	json_object_set_new(o, "container", json_string(p->container));
	json_object_set_new(o, "decision", json_string(p->decision));
	json_object_set_new(o, "reason", json_string(p->reason));
	if (p->code)
		json_object_set_new(o, "code", json_integer(p->code));
	json_object_set_new(o, "decidedAt", json_integer((json_int_t)p->at_ms));
	json_object_set_new(o, "learn", json_boolean(p->learn));
	/* A refused ADD's record (.refused.json) sits beside the attachment's
	 * own: without this flag a reader takes it for the same pod twice. */
	if (p->refused_file)
		json_object_set_new(o, "refusedRecord", json_true());
	if (!strcmp(p->decision, "enforced")) {
		json_object_set_new(o, "mode", json_string(p->audit ? "audit" : "enforce"));
		/* live policy: the generation it runs (0 unknown), and whether
		 * that is the node's current one or the pod is kept at a mode
		 * the current entry would not give it */
		json_object_set_new(o, "policyGeneration", json_integer((json_int_t)p->generation));
		if (p->behind)
			json_object_set_new(o, "policyBehind", json_true());
		if (p->kept)
			json_object_set_new(o, "policyKept", json_true());
		json_object_set_new(o, "kernelRead", json_boolean(p->read_ok));
		if (p->read_error[0])
			json_object_set_new(o, "kernelError", json_string(p->read_error));
		json_object_set_new(o, "podSide", json_boolean(p->pod_present));
		if (p->has_node_side)
			json_object_set_new(o, "nodeSide", json_boolean(p->node_present));
		if (p->checked) {
			json_object_set_new(o, "inSync", json_boolean(p->in_sync));
			json_object_set_new(o, "lastCheck", json_integer((json_int_t)p->last_check_ms));
			if (p->diff[0])
				json_object_set_new(o, "difference", json_string(p->diff));
		}
		json_object_set_new(o, "driftEvents", json_integer((json_int_t)p->drift_events));
		json_object_set_new(o, "repairs", json_integer((json_int_t)p->repairs));
		json_object_set_new(o, "repairErrors", json_integer((json_int_t)p->repair_errors));
		json_object_set_new(o, "learnedV4", json_integer((json_int_t)p->learned[0]));
		json_object_set_new(o, "learnedV6", json_integer((json_int_t)p->learned[1]));
	}
	for (size_t i = 0; i < p->names.n; i++)
		json_array_append_new(names, json_pack("{s:s,s:s,s:I}", "name", p->names.v[i].name, "ports",
						       p->names.v[i].proto_ports, "addresses",
						       (json_int_t)p->names.v[i].addresses));
	for (size_t i = 0; i < p->counters.n; i++) {
		const struct ng_view_counter *c = &p->counters.v[i];

		json_array_append_new(
			denied, json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:I}", "table", c->table, "family",
					  c->netdev ? "netdev" : "inet", "side", c->in_node ? "node" : "pod",
					  "category", c->category, "wouldDeny", c->would_deny, "packets",
					  (json_int_t)c->packets, "bytes", (json_int_t)c->bytes));
	}
	json_object_set_new(o, "names", names);
	json_object_set_new(o, "denied", denied);
	if (p->has_agent) {
		for (int c = 0; c < NG_AC_COUNT; c++)
			json_object_set_new(ac, ng_agent_counter_defs[c].metric,
					    json_integer((json_int_t)p->ac[c]));
		json_object_set_new(o, "agent", ac);
	} else {
		json_decref(ac);
	}
	return o;
}

json_t *ng_status_to_json(const struct ng_view *v)
{
	json_t *o = json_object(), *pods = json_array(), *ready;

	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "written", json_integer((json_int_t)v->now_ms));
	json_object_set_new(o, "agentStart", json_integer((json_int_t)v->start_ms));
	json_object_set_new(o, "serving", json_boolean(v->serving));
	json_object_set_new(o, "agentVersion", json_string(v->agent_version));
	json_object_set_new(o, "generation", json_integer((json_int_t)v->scans));
	json_object_set_new(o, "repair", json_boolean(v->repair));
	ready = json_pack("{s:b,s:s,s:b,s:s,s:b,s:s}", "binary", v->ready.binary, "binaryDetail",
			  v->ready.binary_msg, "conflist", v->ready.conflist, "conflistDetail",
			  v->ready.conflist_msg, "agent", v->ready.serving, "agentDetail",
			  v->ready.serving_msg);
	if (v->ready.has_policy) {
		json_object_set_new(ready, "policy", json_boolean(v->ready.policy));
		json_object_set_new(ready, "policyDetail", json_string(v->ready.policy_msg));
		json_object_set_new(o, "policy",
				    json_pack("{s:I,s:b,s:s,s:I,s:I,s:I}", "generation",
					      (json_int_t)v->policy.gen, "valid", v->policy.valid, "file",
					      v->policy.file, "pods", (json_int_t)v->policy.pods, "behind",
					      (json_int_t)v->policy.behind, "failed",
					      (json_int_t)v->policy.failed));
	}
	json_object_set_new(o, "ready", ready);
	for (size_t i = 0; i < v->pods.n; i++)
		json_array_append_new(pods, pod_json(&v->pods.v[i]));
	json_object_set_new(o, "pods", pods);
	return o;
}

static void str(const json_t *o, const char *k, char *dst, size_t len)
{
	const char *s = json_string_value(json_object_get(o, k));

	snprintf(dst, len, "%s", s ? s : "");
}

static uint64_t u64(const json_t *o, const char *k)
{
	json_int_t n = json_integer_value(json_object_get(o, k));

	return n > 0 ? (uint64_t)n : 0;
}

static int pod_from(const json_t *o, struct ng_view_pod *p)
{
	const json_t *names = json_object_get(o, "names"), *denied = json_object_get(o, "denied"), *x;
	const json_t *ac = json_object_get(o, "agent");
	size_t i;

	memset(p, 0, sizeof(*p));
	str(o, "key", p->key, sizeof(p->key));
	str(o, "namespace", p->ns, sizeof(p->ns));
	str(o, "pod", p->name, sizeof(p->name));
	str(o, "container", p->container, sizeof(p->container));
	str(o, "decision", p->decision, sizeof(p->decision));
	str(o, "reason", p->reason, sizeof(p->reason));
	str(o, "kernelError", p->read_error, sizeof(p->read_error));
	str(o, "difference", p->diff, sizeof(p->diff));
	p->code = (int)json_integer_value(json_object_get(o, "code"));
	p->at_ms = (int64_t)json_integer_value(json_object_get(o, "decidedAt"));
	p->learn = json_is_true(json_object_get(o, "learn"));
	p->audit = json_is_string(json_object_get(o, "mode")) &&
		   !strcmp(json_string_value(json_object_get(o, "mode")), "audit");
	p->refused_file = json_is_true(json_object_get(o, "refusedRecord"));
	p->read_ok = json_is_true(json_object_get(o, "kernelRead"));
	p->pod_present = json_is_true(json_object_get(o, "podSide"));
	p->has_node_side = json_object_get(o, "nodeSide") != NULL;
	p->node_present = json_is_true(json_object_get(o, "nodeSide"));
	p->checked = json_object_get(o, "inSync") != NULL;
	p->in_sync = json_is_true(json_object_get(o, "inSync"));
	p->last_check_ms = (int64_t)u64(o, "lastCheck");
	p->drift_events = u64(o, "driftEvents");
	p->repairs = u64(o, "repairs");
	p->repair_errors = u64(o, "repairErrors");
	p->learned[0] = u64(o, "learnedV4");
	p->learned[1] = u64(o, "learnedV6");
	p->generation = u64(o, "policyGeneration");
	p->behind = json_is_true(json_object_get(o, "policyBehind"));
	p->kept = json_is_true(json_object_get(o, "policyKept"));
	json_array_foreach(names, i, x) {
		struct ng_view_name n = {0};

		str(x, "name", n.name, sizeof(n.name));
		str(x, "ports", n.proto_ports, sizeof(n.proto_ports));
		n.addresses = (unsigned)u64(x, "addresses");
		if (ng_vec_push(&p->names, &n) < 0)
			return -1;
	}
	json_array_foreach(denied, i, x) {
		struct ng_view_counter c = {0};
		char buf[16];

		str(x, "table", c.table, sizeof(c.table));
		str(x, "category", c.category, sizeof(c.category));
		c.would_deny = json_is_true(json_object_get(x, "wouldDeny"));
		str(x, "family", buf, sizeof(buf));
		c.netdev = !strcmp(buf, "netdev");
		str(x, "side", buf, sizeof(buf));
		c.in_node = !strcmp(buf, "node");
		c.packets = u64(x, "packets");
		c.bytes = u64(x, "bytes");
		if (ng_vec_push(&p->counters, &c) < 0)
			return -1;
	}
	if (json_is_object(ac)) {
		p->has_agent = true;
		for (int c = 0; c < NG_AC_COUNT; c++)
			p->ac[c] = u64(ac, ng_agent_counter_defs[c].metric);
	}
	return 0;
}

int ng_status_from_json(const json_t *o, struct ng_view *v, struct ng_err *err)
{
	const json_t *pods = json_object_get(o, "pods"), *x, *ready = json_object_get(o, "ready");
	size_t i;

	memset(v, 0, sizeof(*v));
	if (!json_is_object(o) || json_integer_value(json_object_get(o, "version")) != 1 ||
	    !json_is_array(pods))
		return ng_fail(err, NG_E_DECODE, "status file: not one (version 1)");
	v->now_ms = (int64_t)json_integer_value(json_object_get(o, "written"));
	v->start_ms = (int64_t)json_integer_value(json_object_get(o, "agentStart"));
	v->serving = json_is_true(json_object_get(o, "serving"));
	str(o, "agentVersion", v->agent_version, sizeof(v->agent_version));
	v->scans = u64(o, "generation");
	v->repair = json_is_true(json_object_get(o, "repair"));
	v->ready.binary = json_is_true(json_object_get(ready, "binary"));
	v->ready.conflist = json_is_true(json_object_get(ready, "conflist"));
	v->ready.serving = json_is_true(json_object_get(ready, "agent"));
	str(ready, "binaryDetail", v->ready.binary_msg, sizeof(v->ready.binary_msg));
	str(ready, "conflistDetail", v->ready.conflist_msg, sizeof(v->ready.conflist_msg));
	str(ready, "agentDetail", v->ready.serving_msg, sizeof(v->ready.serving_msg));
	v->ready.has_policy = json_object_get(ready, "policy") != NULL;
	v->ready.policy = json_is_true(json_object_get(ready, "policy"));
	str(ready, "policyDetail", v->ready.policy_msg, sizeof(v->ready.policy_msg));
	{
		const json_t *pol = json_object_get(o, "policy");

		v->policy.gen = u64(pol, "generation");
		v->policy.valid = json_is_true(json_object_get(pol, "valid"));
		str(pol, "file", v->policy.file, sizeof(v->policy.file));
		v->policy.pods = u64(pol, "pods");
		v->policy.behind = u64(pol, "behind");
		v->policy.failed = u64(pol, "failed");
	}
	json_array_foreach(pods, i, x) {
		struct ng_view_pod p;

		if (pod_from(x, &p) < 0 || ng_vec_push(&v->pods, &p) < 0) {
			ng_view_pod_free(&p);
			ng_view_free(v);
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	return 0;
}
