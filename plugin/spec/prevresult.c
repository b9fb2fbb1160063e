#include "spec/cniversion.h"
#include "spec/prevresult.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_util.h"

/* Splits "ADDR/LEN" without masking: prevResult carries the pod's own
 * address with its interface prefix length. */
static int parse_ifaddr(const char *s, struct ng_ifaddr *out)
{
	char buf[NG_IP_STRLEN];
	const char *slash = strchr(s, '/');
	size_t n;
	char *end;
	long plen;

	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -1;
	n = (size_t)(slash - s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (ng_ip_parse(buf, &out->ip) < 0)
		return -1;
	plen = strtol(slash + 1, &end, 10);
	if (*end || end == slash + 1 || plen < 0 || plen > (long)ng_ip_bits(out->ip.fam))
		return -1;
	out->plen = (uint8_t)plen;
	return 0;
}

/* "aa:bb:cc:dd:ee:ff", two hex digits per byte. */
static bool parse_mac(const char *s, uint8_t out[6])
{
	for (int k = 0; k < 6; k++) {
		char *end;
		unsigned long v;

		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return false;
		v = strtoul(s, &end, 16);
		if (end != s + 2 || *end != (k < 5 ? ':' : '\0'))
			return false;
		out[k] = (uint8_t)v;
		s = end + 1;
	}
	return true;
}

/* interfaces[]: the MACs of those in the sandbox. Anything malformed is
 * skipped: only the MLD rule uses them, and a missing MAC only means a
 * narrower rule (README "Multicast"). */
static int parse_macs(const json_t *prev, struct ng_prev *out)
{
	const json_t *ifs = json_object_get(prev, "interfaces"), *it;
	size_t i;

	if (!json_is_array(ifs))
		return 0;
	json_array_foreach(ifs, i, it) {
		const char *mac = ng_json_str(it, "mac"), *sb = ng_json_str(it, "sandbox");
		struct ng_mac m = {0};

		if (!mac || !sb || !*sb || i >= NG_PREV_MAX_IPS || !parse_mac(mac, m.a))
			continue;
		if (ng_vec_push(&out->macs, &m) < 0)
			return -1;
	}
	return 0;
}

int ng_prev_parse(const json_t *prev, struct ng_prev *out, struct ng_err *err)
{
	const json_t *ips, *ip;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(prev))
		return ng_fail(err, NG_E_CONFIG, "prevResult: must be an object");
	if (json_object_get(prev, "ip4") || json_object_get(prev, "ip6"))
		return ng_fail(
			err, NG_E_CONFIG,
			"prevResult: uses the 0.2.0 result format, which this plugin does not support");
	if (parse_macs(prev, out) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	ips = json_object_get(prev, "ips");
	if (!ips)
		return 0;
	if (!json_is_array(ips))
		return ng_fail(err, NG_E_CONFIG, "prevResult.ips: must be an array");
	/* Each IPv4 address is one ARP rule of the packet-socket guard. */
	if (json_array_size(ips) > NG_PREV_MAX_IPS)
		return ng_fail(err, NG_E_CONFIG,
			       "prevResult.ips: %zu addresses, more than %d (README \"Limits\"); nothing was "
			       "applied",
			       json_array_size(ips), NG_PREV_MAX_IPS);
	json_array_foreach(ips, i, ip) {
		const char *addr = ng_json_str(ip, "address");
		const json_t *gw = json_object_get(ip, "gateway");
		struct ng_ifaddr a;

		if (!json_is_object(ip) || !addr || parse_ifaddr(addr, &a) < 0)
			return ng_fail(err, NG_E_CONFIG,
				       "prevResult.ips[%zu].address: must be an address with prefix length, "
				       "e.g. 10.88.0.5/16",
				       i);
		if (ng_vec_push(&out->addrs, &a) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		if (gw && !json_is_null(gw)) {
			struct ng_ip g;
			bool dup = false;

			if (!json_is_string(gw) || ng_ip_parse(json_string_value(gw), &g) < 0)
				return ng_fail(err, NG_E_CONFIG,
					       "prevResult.ips[%zu].gateway: not an IP address", i);
			for (size_t j = 0; j < out->gateways.n; j++)
				dup |= ng_ip_eq(&out->gateways.v[j], &g);
			if (!dup && ng_vec_push(&out->gateways, &g) < 0)
				return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	return 0;
}

void ng_prev_free(struct ng_prev *p)
{
	ng_vec_free(&p->addrs);
	ng_vec_free(&p->gateways);
	ng_vec_free(&p->macs);
}

static void drop_keys(json_t *arr, const char *const keys[])
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return;
	json_array_foreach(arr, i, v) {
		if (!json_is_object(v))
			continue;
		for (int k = 0; keys[k]; k++)
			json_object_del(v, keys[k]);
	}
}

json_t *ng_prev_convert(const json_t *prev, const char *version, struct ng_err *err)
{
	/* Fields the 1.1.0 spec added; older readers do not expect them. */
	static const char *const iface_11[] = {"mtu", "socketPath", "pciID", NULL};
	static const char *const route_11[] = {"mtu", "advmss", "priority", "table", "scope", NULL};
	json_t *out = json_deep_copy(prev), *ips, *ip;
	bool pre_10 = ng_version_cmp(version, "1.0.0") < 0;
	size_t i;

	if (!out) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		return NULL;
	}
	json_object_set_new(out, "cniVersion", json_string(version));
	ips = json_object_get(out, "ips");
	if (json_is_array(ips)) {
		json_array_foreach(ips, i, ip) {
			const char *addr = ng_json_str(ip, "address");
			struct ng_ifaddr a;

			if (!pre_10) {
				json_object_del(ip, "version");
				continue;
			}
			if (!addr || parse_ifaddr(addr, &a) < 0) {
				json_decref(out);
				ng_fail(err, NG_E_CONFIG,
					"prevResult.ips[%zu].address: cannot derive the IP version", i);
				return NULL;
			}
			json_object_set_new(ip, "version", json_string(a.ip.fam == NG_V4 ? "4" : "6"));
		}
	}
	if (ng_version_cmp(version, "1.1.0") < 0) {
		drop_keys(json_object_get(out, "interfaces"), iface_11);
		drop_keys(json_object_get(out, "routes"), route_11);
	}
	return out;
}
