/* `status --names`. See statusnames.h. */
#include "node/statusnames.h"

#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/decision_log.h"

static void set_time(json_t *o, const char *key, const char *left_key, int64_t at_ms, int64_t now_ms)
{
	char ts[64];
	int64_t left = (at_ms - now_ms) / 1000;

	ng_utc_format((time_t)(at_ms / 1000), (long)(at_ms % 1000), ts, sizeof(ts));
	json_object_set_new(o, key, json_string(ts));
	json_object_set_new(o, left_key, json_integer(left > 0 ? left : 0));
}

static json_t *row_json(const struct ng_view_pod *p, const struct ng_view_learned *r, int64_t now_ms)
{
	json_t *o = json_object(), *tables = json_array();
	char ip[NG_IP_STRLEN], ports[16];

	ng_ip_format(&r->ip, ip, sizeof(ip));
	if (r->p_lo == r->p_hi)
		snprintf(ports, sizeof(ports), "%u", r->p_lo);
	else
		snprintf(ports, sizeof(ports), "%u-%u", r->p_lo, r->p_hi);
	json_object_set_new(o, "address", json_string(ip));
	json_object_set_new(o, "proto", json_string(r->proto == 17 ? "udp" : "tcp"));
	json_object_set_new(o, "ports", json_string(ports));
	if (r->pod_expires_ms) {
		json_array_append_new(tables, json_string("pod"));
		if (p->guard)
			json_array_append_new(tables, json_string("guard"));
	}
	if (r->node_expires_ms)
		json_array_append_new(tables, json_string("node"));
	json_object_set_new(o, "tables", tables);
	if (r->pod_expires_ms)
		set_time(o, "podExpires", "podSecondsLeft", r->pod_expires_ms, now_ms);
	if (r->node_expires_ms)
		set_time(o, "nodeExpires", "nodeSecondsLeft", r->node_expires_ms, now_ms);
	json_object_set_new(o, "keptAlive", json_boolean(r->kept_alive));
	return o;
}

static json_t *pod_json(const struct ng_view_pod *p, int64_t now_ms)
{
	json_t *o = json_object(), *names = json_array(), *unnamed = json_array();

	json_object_set_new(o, "pod_namespace", json_string(p->ns));
	json_object_set_new(o, "pod_name", json_string(p->name));
	json_object_set_new(o, "key", json_string(p->key));
	json_object_set_new(o, "learn", json_boolean(p->learn));
	json_object_set_new(o, "fromLearner", json_boolean(p->has_taught));
	for (size_t i = 0; i < p->taught_names.n; i++) {
		json_t *n = json_object(), *addrs = json_array();

		json_object_set_new(n, "name", json_string(p->taught_names.v[i].name));
		json_object_set_new(n, "ports", json_string(p->taught_names.v[i].proto_ports));
		for (size_t k = 0; k < p->taught.n; k++)
			if (p->taught.v[k].name == i)
				json_array_append_new(addrs, row_json(p, &p->taught.v[k], now_ms));
		json_object_set_new(n, "addresses", addrs);
		json_array_append_new(names, n);
	}
	for (size_t k = 0; k < p->taught.n; k++)
		if (p->taught.v[k].name == NG_VIEW_NAME_NONE || p->taught.v[k].name >= p->taught_names.n)
			json_array_append_new(unnamed, row_json(p, &p->taught.v[k], now_ms));
	json_object_set_new(o, "names", names);
	json_object_set_new(o, "unnamed", unnamed);
	json_object_set_new(o, "notShown", json_integer((json_int_t)p->taught_more));
	return o;
}

json_t *ng_status_names_json(const struct ng_view *v, const char *ns, const char *name)
{
	json_t *o = json_object(), *pods = json_array();
	int64_t now = ng_wall_ms();
	char ts[64];

	ng_utc_format((time_t)(now / 1000), (long)(now % 1000), ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];

		if (strcmp(p->decision, "enforced") != 0 || p->refused_file)
			continue;
		if (ns && (strcmp(p->ns, ns) != 0 || strcmp(p->name, name) != 0))
			continue;
		json_array_append_new(pods, pod_json(p, now));
	}
	json_object_set_new(o, "pods", pods);
	return o;
}

/* ---- the table -------------------------------------------------------------- */

/* A string field of the document, "?" when it has none (the document comes
 * over a socket). */
static const char *str(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "?";
}

static void row_line(const json_t *r, FILE *out)
{
	const json_t *tables = json_object_get(r, "tables"), *t;
	char tl[32] = "";
	size_t i;

	for (i = 0; i < json_array_size(tables) && (t = json_array_get(tables, i)); i++) {
		size_t n = strlen(tl);

		snprintf(tl + n, sizeof(tl) - n, "%s%s", n ? "+" : "",
			 json_is_string(t) ? json_string_value(t) : "?");
	}
	fprintf(out, "    %-40s %s/%-11s %-15s", str(r, "address"), str(r, "proto"), str(r, "ports"), tl);
	if (json_object_get(r, "podSecondsLeft"))
		fprintf(out, " pod %llds",
			(long long)json_integer_value(json_object_get(r, "podSecondsLeft")));
	if (json_object_get(r, "nodeSecondsLeft"))
		fprintf(out, " node %llds",
			(long long)json_integer_value(json_object_get(r, "nodeSecondsLeft")));
	if (json_is_true(json_object_get(r, "keptAlive")))
		fprintf(out, "  kept alive by a live connection");
	fputc('\n', out);
}

int ng_status_names_table(const json_t *doc, FILE *out)
{
	const json_t *pods = json_object_get(doc, "pods"), *p;
	size_t i;

	for (i = 0; i < json_array_size(pods) && (p = json_array_get(pods, i)); i++) {
		const json_t *names = json_object_get(p, "names"), *n, *r;
		const json_t *unnamed = json_object_get(p, "unnamed");
		size_t k, j;

		fprintf(out, "%s/%s", str(p, "pod_namespace"), str(p, "pod_name"));
		if (!json_is_true(json_object_get(p, "learn"))) {
			fprintf(out, ": learns no names (egress.names \"resolve\": the node resolved them at "
				     "ADD)\n");
			continue;
		}
		if (!json_is_true(json_object_get(p, "fromLearner"))) {
			fprintf(out, ": the agent's learner has not published it yet\n");
			continue;
		}
		fputc('\n', out);
		for (k = 0; k < json_array_size(names) && (n = json_array_get(names, k)); k++) {
			const json_t *addrs = json_object_get(n, "addresses");

			fprintf(out, "  %s %s: %zu address(es)\n", str(n, "name"), str(n, "ports"),
				json_array_size(addrs));
			for (j = 0; j < json_array_size(addrs) && (r = json_array_get(addrs, j)); j++)
				row_line(r, out);
		}
		if (json_array_size(unnamed)) {
			fprintf(out, "  (name not known: learned before the agent restarted)\n");
			for (j = 0; j < json_array_size(unnamed) && (r = json_array_get(unnamed, j)); j++)
				row_line(r, out);
		}
		if (json_integer_value(json_object_get(p, "notShown")))
			fprintf(out, "  ... and %lld more not shown\n",
				(long long)json_integer_value(json_object_get(p, "notShown")));
	}
	return (int)json_array_size(pods);
}
