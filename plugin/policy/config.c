#include "policy/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_util.h"
#include "spec/cniversion.h"
#include "policy/metadata.h"

int ng_check_prefix_min(const struct ng_config *cfg, const struct ng_prefix *p, const char *what, int code,
			struct ng_err *err)
{
	unsigned min = p->ip.fam == NG_V4 ? cfg->min_prefix_v4 : cfg->min_prefix_v6;

	if (p->plen == 0)
		return ng_fail(err, code, "%s: %s would match every address; it is never accepted", what,
			       p->ip.fam == NG_V4 ? "0.0.0.0/0" : "::/0");
	if (p->plen < min)
		return ng_fail(err, code, "%s: prefix /%u is shorter than the minimum /%u (egress.%s)", what,
			       p->plen, min, p->ip.fam == NG_V4 ? "minPrefixV4" : "minPrefixV6");
	return 0;
}

/* Kubernetes namespace names are DNS-1123 labels. */
static bool is_dns1123_label(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && !(c == '-' && i > 0 && i < n - 1))
			return false;
	}
	return true;
}

/* One of enforce's namespace lists: Kubernetes namespace names, copied. */
static int parse_ns_list(const json_t *enf, const char *key, ng_str_vec *out, struct ng_err *err)
{
	const json_t *ns = json_object_get(enf, key), *v;
	char what[64];
	size_t i;

	if (!ns)
		return 0;
	snprintf(what, sizeof(what), "enforce.%s", key);
	if (!json_is_array(ns))
		return ng_fail(err, NG_E_CONFIG, "%s: must be an array of namespace names", what);
	if (ng_json_list_limit(ns, what, NG_CONFIG_MAX_LIST, err) < 0)
		return -1;
	json_array_foreach((json_t *)ns, i, v) {
		char *copy;

		if (!json_is_string(v) || !is_dns1123_label(json_string_value(v)))
			return ng_fail(err, NG_E_CONFIG, "%s[%zu]: not a Kubernetes namespace name", what, i);
		copy = strdup(json_string_value(v));
		if (!copy || ng_vec_push(out, &copy) < 0) {
			free(copy);
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	return 0;
}

static int parse_enforce(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"namespaces", "auditNamespaces", "optInAnnotation", NULL};
	const json_t *enf = json_object_get(root, "enforce");

	if (!enf)
		return ng_fail(err, NG_E_CONFIG,
			       "enforce: required (say which pods are enforced: enforce.namespaces and/or "
			       "enforce.optInAnnotation)");
	if (ng_json_check_object(enf, "enforce", keys, err) < 0)
		return -1;
	if (parse_ns_list(enf, "namespaces", &cfg->namespaces, err) < 0 ||
	    parse_ns_list(enf, "auditNamespaces", &cfg->audit_namespaces, err) < 0)
		return -1;
	if (ng_json_opt_bool(enf, "optInAnnotation", "enforce.optInAnnotation", false, &cfg->opt_in, err) < 0)
		return -1;
	if (cfg->namespaces.n == 0 && cfg->audit_namespaces.n == 0 && !cfg->opt_in)
		return ng_fail(
			err, NG_E_CONFIG,
			"enforce: selects no pod (enforce.namespaces and enforce.auditNamespaces are "
			"empty and enforce.optInAnnotation is false); a policy that applies to nothing "
			"is refused");
	if (cfg->opt_in && !cfg->annotations_capability)
		return ng_fail(err, NG_E_CONFIG,
			       "enforce.optInAnnotation: needs \"capabilities\": {\"%s\": true} in this "
			       "plugin entry, or the runtime never passes the annotation",
			       NG_ANNOTATIONS_CAP);
	return 0;
}

/* The "dns" object (policy/config_dns.h); no resolver may be a metadata
 * endpoint. */
static int parse_dns(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	if (ng_dns_config_parse(root, &cfg->dns, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->dns.servers.n; i++) {
		struct ng_prefix host = {.ip = cfg->dns.servers.v[i],
					 .plen = (uint8_t)ng_ip_bits(cfg->dns.servers.v[i].fam)};
		char what[64];

		snprintf(what, sizeof(what), "dns.servers[%zu]", i);
		if (ng_check_not_metadata(cfg, &host, what, NG_E_CONFIG, err) < 0)
			return -1;
	}
	return 0;
}

/* egress.allow and egress.envelope share the entry syntax and the prefix
 * floor; only allow entries are checked against the metadata list (an
 * envelope entry is a bound on grants, and each grant is checked itself). */
/* The address checks of one egress entry; `what` names it in messages. */
static int check_dest(const struct ng_config *cfg, const struct ng_dest *d, bool is_envelope,
		      const char *what, struct ng_err *err)
{
	if (d->kind != NG_HOST_PREFIX)
		return 0;
	if (ng_check_prefix_min(cfg, &d->net, what, NG_E_CONFIG, err) < 0)
		return -1;
	return is_envelope ? 0 : ng_check_not_metadata(cfg, &d->net, what, NG_E_CONFIG, err);
}

static int parse_dest_list(const json_t *egress, const char *key, bool is_envelope, struct ng_config *cfg,
			   struct ng_err *err)
{
	const json_t *list = json_object_get(egress, key), *v;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return ng_fail(err, NG_E_CONFIG, "egress.%s: must be an array of destination strings", key);
	if (json_array_size(list) > NG_CONFIG_MAX_LIST)
		return ng_fail(err, NG_E_CONFIG, "egress.%s: %zu entries, more than %d (README \"Limits\")",
			       key, json_array_size(list), NG_CONFIG_MAX_LIST);
	json_array_foreach(list, i, v) {
		struct ng_dest d;
		char what[64];

		/* `what` is formatted only on failure: lists can be long. */
		if (!json_is_string(v))
			return ng_fail(err, NG_E_CONFIG,
				       "egress.%s[%zu]: must be a string like \"tcp://10.0.0.0/8:443\"", key,
				       i);
		/* Wildcards: envelope entries always; allow entries when the
		 * agent learns names from answers (nothing resolves *.x). */
		if (ng_dest_parse(json_string_value(v), is_envelope || cfg->learn, NG_E_CONFIG, &d, err) <
		    0) {
			ng_err_prefix(err, "egress.%s[%zu]: ", key, i);
			return -1;
		}
		if (check_dest(cfg, &d, is_envelope, "", NULL) < 0) {
			snprintf(what, sizeof(what), "egress.%s[%zu]", key, i);
			return check_dest(cfg, &d, is_envelope, what, err);
		}
		if (ng_vec_push(is_envelope ? &cfg->envelope : &cfg->allow, &d) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

static int parse_uint_key(const json_t *obj, const char *key, const char *path, unsigned lo, unsigned hi,
			  unsigned *out, struct ng_err *err)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return ng_fail(err, NG_E_CONFIG, "%s: must be an integer from %u to %u", path, lo, hi);
	*out = (unsigned)json_integer_value(v);
	return 0;
}

static int parse_egress(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"allow",      "envelope", "minPrefixV4", "minPrefixV6",
					   "minNameTTL", "names",    NULL};
	const json_t *eg = json_object_get(root, "egress"), *names;
	unsigned ttl = NG_DEFAULT_MIN_NAME_TTL;

	if (!eg)
		return 0;
	if (ng_json_check_object(eg, "egress", keys, err) < 0)
		return -1;
	/* The mode first: it decides whether wildcards are valid in allow. */
	names = json_object_get(eg, "names");
	if (names) {
		const char *m = json_is_string(names) ? json_string_value(names) : "";

		if (strcmp(m, "learn") != 0 && strcmp(m, "resolve") != 0)
			return ng_fail(err, NG_E_CONFIG, "egress.names: must be \"learn\" or \"resolve\"");
		cfg->learn = strcmp(m, "learn") == 0;
	}
	/* The floors first: the lists are checked against them. */
	if (parse_uint_key(eg, "minPrefixV4", "egress.minPrefixV4", 1, 32, &cfg->min_prefix_v4, err) < 0 ||
	    parse_uint_key(eg, "minPrefixV6", "egress.minPrefixV6", 1, 128, &cfg->min_prefix_v6, err) < 0 ||
	    parse_uint_key(eg, "minNameTTL", "egress.minNameTTL", 30, 604800, &ttl, err) < 0)
		return -1;
	cfg->min_name_ttl = ttl;
	if (parse_dest_list(eg, "allow", false, cfg, err) < 0)
		return -1;
	return parse_dest_list(eg, "envelope", true, cfg, err);
}

static int parse_ingress(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"ports", "sources", "allowNode", NULL};
	const json_t *in = json_object_get(root, "ingress"), *list, *v;
	size_t i;

	if (!in)
		return 0;
	if (ng_json_check_object(in, "ingress", keys, err) < 0)
		return -1;
	list = json_object_get(in, "ports");
	if (list) {
		if (!json_is_array(list))
			return ng_fail(err, NG_E_CONFIG, "ingress.ports: must be an array of port numbers");
		if (ng_json_list_limit(list, "ingress.ports", NG_CONFIG_MAX_SHORT_LIST, err) < 0)
			return -1;
		json_array_foreach(list, i, v) {
			uint16_t port;

			if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65535)
				return ng_fail(err, NG_E_CONFIG,
					       "ingress.ports[%zu]: must be an integer from 1 to 65535", i);
			port = (uint16_t)json_integer_value(v);
			if (ng_vec_push(&cfg->ingress_ports, &port) < 0)
				return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	list = json_object_get(in, "sources");
	if (list) {
		if (!json_is_array(list))
			return ng_fail(err, NG_E_CONFIG,
				       "ingress.sources: must be an array of IP addresses or CIDRs");
		if (ng_json_list_limit(list, "ingress.sources", NG_CONFIG_MAX_LIST, err) < 0)
			return -1;
		json_array_foreach(list, i, v) {
			struct ng_prefix p;
			const char *why = NULL;
			char what[64];

			snprintf(what, sizeof(what), "ingress.sources[%zu]", i);
			if (!json_is_string(v) || ng_prefix_parse(json_string_value(v), &p, &why) < 0)
				return ng_fail(err, NG_E_CONFIG, "%s: %s", what,
					       why ? why : "must be a string");
			if (ng_check_prefix_min(cfg, &p, what, NG_E_CONFIG, err) < 0)
				return -1;
			if (ng_vec_push(&cfg->ingress_sources, &p) < 0)
				return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	if (cfg->ingress_ports.n && !cfg->ingress_sources.n)
		return ng_fail(
			err, NG_E_CONFIG,
			"ingress.sources: required when ingress.ports is set (who may call the sidecar?)");
	if (cfg->ingress_sources.n && !cfg->ingress_ports.n)
		return ng_fail(err, NG_E_CONFIG, "ingress.ports: required when ingress.sources is set");
	return ng_json_opt_bool(in, "allowNode", "ingress.allowNode", false, &cfg->allow_node, err);
}

/* log: NFLOG for denied packets, on by default (group
 * NG_DEFAULT_LOG_GROUP), rate-limited per table so a flood of denied
 * packets cannot flood the reader; `"log": false` turns it off. */
static int parse_log(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"nflogGroup", "ratePerSecond", "burst", NULL};
	const json_t *log = json_object_get(root, "log");
	unsigned group = NG_DEFAULT_LOG_GROUP;

	cfg->nflog_group = NG_DEFAULT_LOG_GROUP;
	cfg->log_rate = NG_DEFAULT_LOG_RATE;
	cfg->log_burst = NG_DEFAULT_LOG_BURST;
	if (!log)
		return 0;
	if (json_is_false(log)) {
		cfg->nflog_group = -1;
		return 0;
	}
	if (!json_is_object(log))
		return ng_fail(err, NG_E_CONFIG,
			       "log: must be an object ({\"nflogGroup\": N, ...}) or false (no logging)");
	if (ng_json_check_object(log, "log", keys, err) < 0)
		return -1;
	if (parse_uint_key(log, "nflogGroup", "log.nflogGroup", 0, 65535, &group, err) < 0 ||
	    parse_uint_key(log, "ratePerSecond", "log.ratePerSecond", 1, 100000, &cfg->log_rate, err) < 0 ||
	    parse_uint_key(log, "burst", "log.burst", 1, 100000, &cfg->log_burst, err) < 0)
		return -1;
	if (group == NG_OBSERVE_GROUP)
		return ng_fail(err, NG_E_CONFIG,
			       "log.nflogGroup: %u is the node agent's own group (the node-side DNS "
			       "observer); choose another",
			       (unsigned)NG_OBSERVE_GROUP);
	cfg->nflog_group = (int)group;
	return 0;
}

static int parse_header(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	const json_t *v = json_object_get(root, "cniVersion"), *caps;

	if (!v)
		return ng_fail(err, NG_E_CONFIG, "cniVersion: required");
	if (!json_is_string(v) || strlen(json_string_value(v)) >= sizeof(cfg->cni_version))
		return ng_fail(err, NG_E_CONFIG, "cniVersion: must be a version string");
	snprintf(cfg->cni_version, sizeof(cfg->cni_version), "%s", json_string_value(v));
	if (!ng_version_supported(cfg->cni_version))
		return ng_fail(err, NG_E_VERSION, "cniVersion \"%s\" is not supported (supported: %s)",
			       cfg->cni_version, ng_versions_text());

	v = json_object_get(root, "name");
	if (v && !json_is_string(v))
		return ng_fail(err, NG_E_CONFIG, "name: must be a string");
	snprintf(cfg->name, sizeof(cfg->name), "%s", v ? json_string_value(v) : "");

	caps = json_object_get(root, "capabilities");
	if (caps) {
		const json_t *c;

		if (!json_is_object(caps))
			return ng_fail(err, NG_E_CONFIG, "capabilities: must be an object");
		c = json_object_get(caps, NG_ANNOTATIONS_CAP);
		if (c && !json_is_boolean(c))
			return ng_fail(err, NG_E_CONFIG, "capabilities.%s: must be true or false",
				       NG_ANNOTATIONS_CAP);
		cfg->annotations_capability = json_is_true(c);
	}

	v = json_object_get(root, "logFile");
	if (v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
		    strlen(json_string_value(v)) >= sizeof(cfg->log_file))
			return ng_fail(err, NG_E_CONFIG, "logFile: must be an absolute path");
		snprintf(cfg->log_file, sizeof(cfg->log_file), "%s", json_string_value(v));
	}

	v = json_object_get(root, "denyAction");
	cfg->deny = NG_DENY_REJECT;
	if (v) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "reject") == 0)
			cfg->deny = NG_DENY_REJECT;
		else if (strcmp(s, "drop") == 0)
			cfg->deny = NG_DENY_DROP;
		else
			return ng_fail(err, NG_E_CONFIG, "denyAction: must be \"reject\" or \"drop\"");
	}
	return 0;
}

/* stateDir: an absolute path without "..", where ADD records pods for the
 * agent (and the agent holds its lock). */
static int parse_state_dir(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	const json_t *v = json_object_get(root, "stateDir");
	const char *s;

	if (!v)
		return 0;
	s = json_is_string(v) ? json_string_value(v) : "";
	if (s[0] != '/' || strstr(s, "/../") || strlen(s) >= sizeof(cfg->state_dir) - 128 ||
	    (strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/..")))
		return ng_fail(err, NG_E_CONFIG,
			       "stateDir: must be an absolute path (no \"..\"), under %zu bytes",
			       sizeof(cfg->state_dir) - 128);
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", s);
	return 0;
}

/* "required" unless said otherwise: a node whose primary plugin gives pods
 * no host-side device must say so explicitly ("auto" or "off"). */
static int parse_host_mirror(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const names[] = {"required", "auto", "off"};
	const json_t *v = json_object_get(root, "hostMirror");
	const char *s;

	cfg->host_mirror = NG_HOST_REQUIRED;
	if (!v)
		return 0;
	s = json_is_string(v) ? json_string_value(v) : "";
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			cfg->host_mirror = (enum ng_host_mirror)i;
			return 0;
		}
	return ng_fail(err, NG_E_CONFIG, "hostMirror: must be \"required\", \"auto\" or \"off\"");
}

int ng_config_parse(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	/* The spec's keys, the runtime's keys, and ours. Anything else is a
	 * typo that would otherwise weaken a pod without a sound. */
	static const char *const keys[] = {
		"cniVersion",
		"name",
		"type",
		"capabilities",
		"runtimeConfig",
		"prevResult",
		"args",
		"cni.dev/valid-attachments",
		"cni.dev/attachments",
		"logFile",
		"enforce",
		"dns",
		"egress",
		"ingress",
		"metadata",
		"denyAction",
		"log",
		"rawPacketGuard",
		"stateDir",
		"hostMirror",
		NULL,
	};
	json_t *ours;
	const char *k;
	json_t *v;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->min_prefix_v4 = NG_DEFAULT_MIN_PREFIX_V4;
	cfg->min_prefix_v6 = NG_DEFAULT_MIN_PREFIX_V6;
	cfg->min_name_ttl = NG_DEFAULT_MIN_NAME_TTL;
	cfg->learn = true;
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s", NG_DEFAULT_STATE_DIR);

	if (!json_is_object(root))
		return ng_fail(err, NG_E_DECODE, "network configuration must be a JSON object");
	if (parse_header(root, cfg, err) < 0)
		return -1;
	if (ng_json_check_object(root, "", keys, err) < 0)
		return -1;

	/* Placeholders anywhere in the platform's part of the entry. */
	ours = json_object();
	if (!ours)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	json_object_foreach((json_t *)root, k, v) {
		if (strcmp(k, "prevResult") != 0 && strcmp(k, "runtimeConfig") != 0 && strcmp(k, "args") != 0)
			json_object_set(ours, k, v);
	}
	rc = ng_refuse_placeholders(ours, "", NG_E_CONFIG, err);
	json_decref(ours);
	if (rc < 0)
		return -1;

	if (ng_metadata_parse(root, cfg, err) < 0 || parse_enforce(root, cfg, err) < 0 ||
	    parse_dns(root, cfg, err) < 0 || parse_egress(root, cfg, err) < 0 ||
	    ng_dns_config_finish(root, cfg->learn, &cfg->dns, err) < 0 || parse_ingress(root, cfg, err) < 0 ||
	    parse_log(root, cfg, err) < 0 || parse_state_dir(root, cfg, err) < 0)
		return -1;
	if (parse_host_mirror(root, cfg, err) < 0)
		return -1;
	/* On unless the platform says otherwise (and has dropped NET_RAW). */
	return ng_json_opt_bool(root, "rawPacketGuard", "rawPacketGuard", true, &cfg->raw_guard, err);
}

void ng_config_free(struct ng_config *cfg)
{
	for (size_t i = 0; i < cfg->namespaces.n; i++)
		free(cfg->namespaces.v[i]);
	ng_vec_free(&cfg->namespaces);
	for (size_t i = 0; i < cfg->audit_namespaces.n; i++)
		free(cfg->audit_namespaces.v[i]);
	ng_vec_free(&cfg->audit_namespaces);
	ng_dns_config_free(&cfg->dns);
	ng_vec_free(&cfg->allow);
	ng_vec_free(&cfg->envelope);
	ng_vec_free(&cfg->ingress_ports);
	ng_vec_free(&cfg->ingress_sources);
	ng_vec_free(&cfg->metadata);
}
