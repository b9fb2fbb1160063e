#include "state/migrate.h"

#include <linux/netfilter.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ng_migrate_v1(const json_t *dec, const json_t *pod, struct ng_record *out, struct ng_err *err)
{
	const json_t *tables = json_object_get(dec, "tables"), *t, *conf = json_object_get(dec, "conf");
	const char *decision = jstr(dec, "decision"), *nonce = pod ? jstr(pod, "nonce") : NULL;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(dec) || json_integer_value(json_object_get(dec, "version")) != 1 || !decision ||
	    strlen(decision) >= sizeof(out->decision))
		return ng_fail(err, NG_E_DECODE, "0.2 decision record: not one (version 1)");
	if (ng_podref_set(&out->pod, jstr(dec, "podNamespace"), jstr(dec, "podName"),
			  jstr(dec, "containerId"), jstr(dec, "ifname"), jstr(dec, "netns"), err) < 0 ||
	    ng_record_key(out->pod.container_id, out->pod.ifname, out->key, sizeof(out->key), err) < 0) {
		ng_record_free(out);
		err->code = NG_E_DECODE;
		return -1;
	}
	out->pod.netns_ino = (uint64_t)json_integer_value(json_object_get(dec, "netnsIno"));
	if (pod)
		out->pod.netns_dev = (uint64_t)json_integer_value(json_object_get(pod, "netnsDev"));
	snprintf(out->decision, sizeof(out->decision), "%s", decision);
	snprintf(out->reason, sizeof(out->reason), "%.255s", jstr(dec, "reason") ? jstr(dec, "reason") : "");
	out->code = (int)json_integer_value(json_object_get(dec, "code"));
	out->at_ms = (int64_t)json_integer_value(json_object_get(dec, "at"));
	out->learn = json_is_true(json_object_get(dec, "learn"));
	if (nonce && strlen(nonce) == NG_NONCE_LEN)
		memcpy(out->nonce, nonce, NG_NONCE_LEN + 1);
	json_array_foreach(tables, i, t) {
		struct ng_record_table rt = {0};
		const char *ns = jstr(t, "netns"), *fam = jstr(t, "family"), *name = jstr(t, "table");

		if (!ns || !fam || !name || strlen(name) >= sizeof(rt.name) ||
		    ng_vec_push(&out->tables, &rt) < 0) {
			ng_record_free(out);
			return ng_fail(err, NG_E_DECODE, "0.2 decision record: tables[%zu] malformed", i);
		}
		out->tables.v[out->tables.n - 1].in_node = !strcmp(ns, "node");
		out->tables.v[out->tables.n - 1].family =
			!strcmp(fam, "netdev") ? NFPROTO_NETDEV : NFPROTO_INET;
		memcpy(out->tables.v[out->tables.n - 1].name, name, strlen(name) + 1);
	}
	if (json_is_object(conf))
		out->conf = json_incref((json_t *)conf);
	return 0;
}
