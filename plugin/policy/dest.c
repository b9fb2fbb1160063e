#include "policy/dest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *ng_proto_name(uint8_t proto)
{
	return proto == NG_PROTO_UDP ? "udp" : "tcp";
}

const char *ng_dns_name_check(char *name)
{
	size_t len = strlen(name);
	bool all_numeric_last = true;

	if (len > 0 && name[len - 1] == '.')
		name[--len] = '\0';
	if (len == 0)
		return "empty host name";
	if (len > NG_NAME_MAX)
		return "host name longer than 253 characters";

	size_t label = 0;
	for (size_t i = 0; i <= len; i++) {
		char c = name[i];

		if (c == '.' || c == '\0') {
			if (label == 0)
				return "empty label in host name";
			if (label > 63)
				return "label longer than 63 characters in host name";
			if (name[i - 1] == '-')
				return "label ends with '-' in host name";
			if (c == '.')
				all_numeric_last = true;
			label = 0;
			continue;
		}
		if (c >= 'A' && c <= 'Z')
			name[i] = (char)(c - 'A' + 'a');
		c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
			return "host name may hold only letters, digits, '-' and '.'";
		if (c == '-' && label == 0)
			return "label starts with '-' in host name";
		if (!(c >= '0' && c <= '9'))
			all_numeric_last = false;
		label++;
	}
	/* "10.0.0" or "1.2.3.4.5" is a mistyped address, not a name: a name's
	 * last label is never all digits (RFC 3696 section 2). */
	if (all_numeric_last)
		return "looks like a malformed IP address";
	return NULL;
}

/* Parses "P" or "P-Q" into an inclusive range of ports 1..65535. */
static const char *parse_ports(const char *s, uint16_t *lo, uint16_t *hi)
{
	unsigned long v[2];
	const char *part = s;
	int n = 0;

	if (!*s)
		return "missing port";
	while (n < 2) {
		size_t digits = strspn(part, "0123456789");

		if (digits == 0)
			return "port is not a number";
		if (digits > 5)
			return "port out of range 1-65535";
		v[n] = strtoul(part, NULL, 10);
		if (v[n] < 1 || v[n] > 65535)
			return "port out of range 1-65535";
		n++;
		part += digits;
		if (*part == '\0')
			break;
		if (*part != '-' || n == 2)
			return "port must be PORT or PORT-PORT";
		part++;
	}
	if (n == 1)
		v[1] = v[0];
	if (v[0] > v[1])
		return "port range is reversed";
	*lo = (uint16_t)v[0];
	*hi = (uint16_t)v[1];
	return NULL;
}

int ng_dest_parse(const char *s, bool wildcard_ok, int code, struct ng_dest *out, struct ng_err *err)
{
	struct ng_dest d = {0};
	char host[NG_DEST_TEXT_MAX];
	const char *rest, *portstr, *why = NULL;
	size_t hostlen;

	if (strlen(s) >= sizeof(d.text))
		return ng_fail(err, code, "destination entry longer than %zu characters", sizeof(d.text) - 1);
	snprintf(d.text, sizeof(d.text), "%s", s);

	d.proto = NG_PROTO_TCP;
	rest = s;
	if (strstr(s, "://")) {
		if (strncasecmp(s, "tcp://", 6) == 0) {
			d.proto = NG_PROTO_TCP;
		} else if (strncasecmp(s, "udp://", 6) == 0) {
			d.proto = NG_PROTO_UDP;
		} else {
			return ng_fail(err, code, "destination \"%s\": protocol must be tcp:// or udp://", s);
		}
		rest = s + 6;
	}

	if (rest[0] == '[') {
		const char *close = strchr(rest, ']');

		if (!close)
			return ng_fail(err, code, "destination \"%s\": missing ']' after IPv6 address", s);
		hostlen = (size_t)(close - rest - 1);
		memcpy(host, rest + 1, hostlen);
		host[hostlen] = '\0';
		if (close[1] != ':')
			return ng_fail(err, code, "destination \"%s\": port is required (HOST:PORT)", s);
		portstr = close + 2;
		if (ng_prefix_parse(host, &d.net, &why) < 0 || d.net.ip.fam != NG_V6)
			return ng_fail(
				err, code,
				"destination \"%s\": bracketed host is not an IPv6 address or CIDR%s%s", s,
				why ? ": " : "", why ? why : "");
		d.kind = NG_HOST_PREFIX;
	} else {
		const char *colon = strchr(rest, ':');

		if (!colon)
			return ng_fail(err, code, "destination \"%s\": port is required (HOST:PORT)", s);
		if (strchr(colon + 1, ':'))
			return ng_fail(err, code,
				       "destination \"%s\": IPv6 addresses must be written in brackets, e.g. "
				       "[fd00::1]:443",
				       s);
		hostlen = (size_t)(colon - rest);
		memcpy(host, rest, hostlen);
		host[hostlen] = '\0';
		portstr = colon + 1;
		if (hostlen == 0)
			return ng_fail(err, code, "destination \"%s\": empty host", s);

		if (strchr(host, '/') || ng_ip_parse(host, &d.net.ip) == 0) {
			if (ng_prefix_parse(host, &d.net, &why) < 0 || d.net.ip.fam != NG_V4)
				return ng_fail(err, code, "destination \"%s\": %s", s,
					       why ? why : "not an IPv4 address or CIDR");
			d.kind = NG_HOST_PREFIX;
		} else if (host[0] == '*') {
			if (!wildcard_ok)
				return ng_fail(
					err, code,
					"destination \"%s\": wildcards are only allowed in egress.envelope, "
					"and in egress.allow and grants with egress.names \"learn\"",
					s);
			if (host[1] != '.')
				return ng_fail(err, code,
					       "destination \"%s\": a wildcard must be written *.suffix", s);
			snprintf(d.name, sizeof(d.name), "%s", host + 2);
			why = ng_dns_name_check(d.name);
			if (why)
				return ng_fail(err, code, "destination \"%s\": %s", s, why);
			/* "*.com" would hand every pod the whole TLD: refuse a
			 * suffix of one label, as the prefix minimum does for CIDRs. */
			if (!strchr(d.name, '.'))
				return ng_fail(
					err, code,
					"destination \"%s\": wildcard suffix must have at least two labels",
					s);
			d.kind = NG_HOST_WILDCARD;
		} else {
			snprintf(d.name, sizeof(d.name), "%s", host);
			why = ng_dns_name_check(d.name);
			if (why)
				return ng_fail(err, code, "destination \"%s\": %s", s, why);
			d.kind = NG_HOST_NAME;
		}
	}

	why = parse_ports(portstr, &d.port_lo, &d.port_hi);
	if (why)
		return ng_fail(err, code, "destination \"%s\": %s", s, why);
	*out = d;
	return 0;
}

bool ng_name_under(const char *name, const char *suffix, bool strict)
{
	size_t n = strlen(name), s = strlen(suffix);

	if (n == s)
		return !strict && strcmp(name, suffix) == 0;
	if (n < s + 2)
		return false;
	return name[n - s - 1] == '.' && strcmp(name + n - s, suffix) == 0;
}

bool ng_dest_matches_name(const struct ng_dest *d, const char *name)
{
	if (d->kind == NG_HOST_NAME)
		return strcmp(d->name, name) == 0;
	return d->kind == NG_HOST_WILDCARD && ng_name_under(name, d->name, true);
}

bool ng_dest_within(const struct ng_dest *inner, const struct ng_dest *outer)
{
	if (inner->proto != outer->proto)
		return false;
	if (inner->port_lo < outer->port_lo || inner->port_hi > outer->port_hi)
		return false;

	switch (outer->kind) {
	case NG_HOST_PREFIX:
		return inner->kind == NG_HOST_PREFIX && ng_prefix_contains(&outer->net, &inner->net);
	case NG_HOST_NAME: return inner->kind == NG_HOST_NAME && strcmp(inner->name, outer->name) == 0;
	case NG_HOST_WILDCARD:
		if (inner->kind == NG_HOST_NAME)
			return ng_name_under(inner->name, outer->name, true);
		if (inner->kind == NG_HOST_WILDCARD)
			return ng_name_under(inner->name, outer->name, false);
		return false;
	}
	return false;
}
