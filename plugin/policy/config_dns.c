#include "policy/config_dns.h"

#include <stdio.h>
#include <string.h>

#include "base/json_util.h"

static int parse_servers(const json_t *dns, struct ng_dns_config *d, struct ng_err *err)
{
	const json_t *servers = json_object_get(dns, "servers"), *v;
	size_t i;

	if (!servers)
		return 0;
	if (!json_is_array(servers))
		return ng_fail(err, NG_E_CONFIG, "dns.servers: must be an array of IP addresses");
	if (ng_json_list_limit(servers, "dns.servers", NG_DNS_SERVERS_MAX, err) < 0)
		return -1;
	json_array_foreach(servers, i, v) {
		struct ng_ip ip;

		if (!json_is_string(v) || ng_ip_parse(json_string_value(v), &ip) < 0)
			return ng_fail(err, NG_E_CONFIG, "dns.servers[%zu]: not an IP address", i);
		if (ng_vec_push(&d->servers, &ip) < 0)
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

static int parse_always(const json_t *dns, struct ng_dns_config *d, struct ng_err *err)
{
	const json_t *list = json_object_get(dns, "alwaysAllowed"), *v;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return ng_fail(err, NG_E_CONFIG, "dns.alwaysAllowed: must be an array of names");
	if (ng_json_list_limit(list, "dns.alwaysAllowed", NG_DNS_ALWAYS_MAX, err) < 0)
		return -1;
	json_array_foreach(list, i, v) {
		struct ng_dest e;
		char what[64];

		snprintf(what, sizeof(what), "dns.alwaysAllowed[%zu]", i);
		if (!json_is_string(v))
			return ng_fail(err, NG_E_CONFIG, "%s: must be a string", what);
		if (parse_always_one(json_string_value(v), what, &e, err) < 0)
			return -1;
		if (ng_vec_push(&d->always, &e) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

int ng_dns_config_parse(const json_t *root, struct ng_dns_config *d, struct ng_err *err)
{
	static const char *const keys[] = {"servers", "queries", "alwaysAllowed", "refusedAnswer", NULL};
	const json_t *dns = json_object_get(root, "dns"), *v;

	d->refused_rcode = 3;
	if (!dns)
		return 0;
	if (ng_json_check_object(dns, "dns", keys, err) < 0 || parse_servers(dns, d, err) < 0 ||
	    parse_always(dns, d, err) < 0)
		return -1;
	v = json_object_get(dns, "refusedAnswer");
	if (v) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "nxdomain") != 0 && strcmp(s, "refused") != 0)
			return ng_fail(err, NG_E_CONFIG,
				       "dns.refusedAnswer: must be \"nxdomain\" or \"refused\"");
		d->refused_rcode = strcmp(s, "refused") == 0 ? 5 : 3;
	}
	v = json_object_get(dns, "queries");
	if (v && (!json_is_string(v) ||
		  (strcmp(json_string_value(v), "listed") != 0 && strcmp(json_string_value(v), "any") != 0)))
		return ng_fail(err, NG_E_CONFIG, "dns.queries: must be \"listed\" or \"any\"");
	return 0;
}

int ng_dns_config_finish(const json_t *root, bool learn, struct ng_dns_config *d, struct ng_err *err)
{
	const json_t *v = json_object_get(json_object_get(root, "dns"), "queries");
	const char *q = v ? json_string_value(v) : NULL;

	if (!learn && q && !strcmp(q, "listed"))
		return ng_fail(err, NG_E_CONFIG,
			       "dns.queries: \"listed\" needs egress.names \"learn\" (the agent checks each "
			       "query); in \"resolve\" mode only \"any\" applies");
	d->queries_listed = learn && (!q || !strcmp(q, "listed"));
	if (!learn && d->always.n)
		return ng_fail(err, NG_E_CONFIG,
			       "dns.alwaysAllowed: only used with dns.queries \"listed\" (egress.names "
			       "\"learn\")");
	return 0;
}

void ng_dns_config_free(struct ng_dns_config *d)
{
	ng_vec_free(&d->servers);
	ng_vec_free(&d->always);
}
