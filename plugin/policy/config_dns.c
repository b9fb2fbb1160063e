#include "policy/config_dns.h"

#include <stdio.h>
#include <string.h>

#include "base/json_util.h"
#include "policy/metadata.h"

static int parse_servers(const json_t *dns, struct ng_config *cfg, struct ng_err *err)
{
	const json_t *servers = json_object_get(dns, "servers"), *v;
	size_t i;

	if (!servers)
		return 0;
	if (!json_is_array(servers))
		return ng_fail(err, NG_E_CONFIG, "dns.servers: must be an array of IP addresses");
	if (ng_config_list_limit(servers, "dns.servers", NG_CONFIG_MAX_SHORT_LIST, err) < 0)
		return -1;
	json_array_foreach(servers, i, v) {
		struct ng_ip ip;
		struct ng_prefix host;
		char what[64];

		snprintf(what, sizeof(what), "dns.servers[%zu]", i);
		if (!json_is_string(v) || ng_ip_parse(json_string_value(v), &ip) < 0)
			return ng_fail(err, NG_E_CONFIG, "%s: not an IP address", what);
		host.ip = ip;
		host.plen = (uint8_t)ng_ip_bits(ip.fam);
		if (ng_check_not_metadata(cfg, &host, what, NG_E_CONFIG, err) < 0)
			return -1;
		if (ng_vec_push(&cfg->dns, &ip) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

/* One dns.alwaysAllowed entry: a DNS name or *.suffix, validated as a name
 * entry of egress.allow is, without a port. A single label ("com",
 * "*.com", and "*." with none) is refused: it would let every pod ask for
 * a whole top-level domain, which is the channel this closes. */
static int parse_always_one(const char *s, const char *what, struct ng_dest *d, struct ng_err *err)
{
	bool wildcard = strncmp(s, "*.", 2) == 0;
	const char *why;

	memset(d, 0, sizeof(*d));
	if (strlen(s) >= sizeof(d->text))
		return ng_fail(err, NG_E_CONFIG, "%s: longer than %zu characters", what, sizeof(d->text) - 1);
	snprintf(d->text, sizeof(d->text), "%s", s);
	snprintf(d->name, sizeof(d->name), "%s", wildcard ? s + 2 : s);
	if (strchr(d->name, '*') || strchr(d->name, ':'))
		return ng_fail(err, NG_E_CONFIG,
			       "%s: \"%s\": a DNS name or *.suffix, without a port or another '*'", what, s);
	why = ng_dns_name_check(d->name);
	if (why)
		return ng_fail(err, NG_E_CONFIG, "%s: \"%s\": %s", what, s, why);
	if (!strchr(d->name, '.'))
		return ng_fail(err, NG_E_CONFIG,
			       "%s: \"%s\": a single label would allow a whole top-level domain; name at "
			       "least two labels",
			       what, s);
	d->kind = wildcard ? NG_HOST_WILDCARD : NG_HOST_NAME;
	return 0;
}

static int parse_always(const json_t *dns, struct ng_config *cfg, struct ng_err *err)
{
	const json_t *list = json_object_get(dns, "alwaysAllowed"), *v;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return ng_fail(err, NG_E_CONFIG, "dns.alwaysAllowed: must be an array of names");
	if (ng_config_list_limit(list, "dns.alwaysAllowed", NG_DNS_ALWAYS_MAX, err) < 0)
		return -1;
	json_array_foreach(list, i, v) {
		struct ng_dest d;
		char what[64];

		snprintf(what, sizeof(what), "dns.alwaysAllowed[%zu]", i);
		if (!json_is_string(v))
			return ng_fail(err, NG_E_CONFIG, "%s: must be a string", what);
		if (parse_always_one(json_string_value(v), what, &d, err) < 0)
			return -1;
		if (ng_vec_push(&cfg->dns_always, &d) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

int ng_config_parse_dns(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"servers", "queries", "alwaysAllowed", "refusedAnswer", NULL};
	const json_t *dns = json_object_get(root, "dns"), *v;

	cfg->refused_rcode = 3;
	if (!dns)
		return 0;
	if (ng_json_check_object(dns, "dns", keys, err) < 0 || parse_servers(dns, cfg, err) < 0 ||
	    parse_always(dns, cfg, err) < 0)
		return -1;
	v = json_object_get(dns, "refusedAnswer");
	if (v) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "nxdomain") != 0 && strcmp(s, "refused") != 0)
			return ng_fail(err, NG_E_CONFIG,
				       "dns.refusedAnswer: must be \"nxdomain\" or \"refused\"");
		cfg->refused_rcode = strcmp(s, "refused") == 0 ? 5 : 3;
	}
	v = json_object_get(dns, "queries");
	if (v && (!json_is_string(v) ||
		  (strcmp(json_string_value(v), "listed") != 0 && strcmp(json_string_value(v), "any") != 0)))
		return ng_fail(err, NG_E_CONFIG, "dns.queries: must be \"listed\" or \"any\"");
	return 0;
}

int ng_config_finish_dns(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	const json_t *v = json_object_get(json_object_get(root, "dns"), "queries");
	const char *q = v ? json_string_value(v) : NULL;

	if (!cfg->learn && q && !strcmp(q, "listed"))
		return ng_fail(err, NG_E_CONFIG,
			       "dns.queries: \"listed\" needs egress.names \"learn\" (the agent checks each "
			       "query); in \"resolve\" mode only \"any\" applies");
	cfg->queries_listed = cfg->learn && (!q || !strcmp(q, "listed"));
	if (!cfg->learn && cfg->dns_always.n)
		return ng_fail(err, NG_E_CONFIG,
			       "dns.alwaysAllowed: only used with dns.queries \"listed\" (egress.names "
			       "\"learn\")");
	return 0;
}
