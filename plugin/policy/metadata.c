#include "policy/metadata.h"

#include <string.h>

#include "base/json_util.h"

/* Cloud metadata endpoints, refused before any allow rule (README "Cloud
 * metadata"). Not all of 169.254.0.0/16: node-local DNS and EKS Pod
 * Identity (169.254.170.23) live there. Each with the document that names it. */
static const char *const builtin_metadata[] = {
	/* AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle, Akamai ...:
	 * docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html */
	"169.254.169.254",
	"fd00:ec2::254", /* AWS IMDS over IPv6 (same page) */
	/* AWS ECS task credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI):
	 * docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html */
	"169.254.170.2",
	"100.100.100.200", /* Alibaba Cloud: alibabacloud.com/help/en/ecs/user-guide/overview-of-ecs-instance-metadata */
	"168.63.129.16", /* Azure WireServer: learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16 */
	"fd20:ce::254", /* GCP over IPv6: cloud.google.com/compute/docs/metadata/querying-metadata */
	/* GKE metadata server (Workload Identity); the node DNATs
	 * 169.254.169.254 to it: github.com/kubernetes/kubernetes/pull/100639 */
	"169.254.169.252",
	"169.254.0.23", /* Tencent Cloud, metadata.tencentyun.com: tencentcloud.com/document/product/213/4934 */
	/* Scaleway (from the guide; its own page was not in the stored docs to check) */
	"169.254.42.42",
	"fd00:42::42",
	/* Oracle Cloud over IPv6: docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm */
	"fd00:c1::a9fe:a9fe",
	/* Oracle Cloud at Customer / Classic: docs.oracle.com/en/cloud/cloud-at-customer/
	 * occ-get-started/retrieve-predefined-instance-metadata.html */
	"192.0.0.192",
	/* Akamai (Linode) over IPv6: techdocs.akamai.com/cloud-computing/docs/metadata-service-api */
	"fd00:a9fe:a9fe::1",
	"fe80::a9fe:a9fe", /* OpenStack and Akamai over IPv6: docs.openstack.org/nova/latest/user/metadata.html */
	NULL,
};

/* The single-address IPv6 forms of an IPv4 address: the first 12 bytes. */
static const uint8_t single_forms[][12] = {
	{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, /* IPv4-mapped ::ffff:a.b.c.d (RFC 4291 2.5.5.2) */
	{0},                                        /* IPv4-compatible ::a.b.c.d (RFC 4291 2.5.5.1) */
	{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, /* IPv4-translated ::ffff:0:a.b.c.d (RFC 2765) */
	{0, 0x64, 0xff, 0x9b},                      /* NAT64 well-known prefix 64:ff9b::/96 (RFC 6052) */
};

#define FIXED6(b0, b1, b2, b3, b4, b5) \
	{                              \
		b0, b1, b2, b3, b4, b5 \
	}
#define MASK6                                      \
	{                                          \
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff \
	}
/* The forms with free bits. RFC 6052 2.2 places the IPv4 address after a
 * prefix of length L, skipping bits 64-71 (the u octet); RFC 8215 makes
 * 64:ff9b:1::/48 the local-use prefix, under which an operator may choose
 * any L from 48 to 96. */
const struct ng_v6_form ng_v6_forms[NG_V6_FORMS] = {
	{"NAT64 local-use /48 (RFC 8215, RFC 6052)",
	 FIXED6(0, 0x64, 0xff, 0x9b, 0, 1),
	 MASK6,
	 {6, 7, 9, 10},
	 false,
	 false},
	{"NAT64 local-use /56 (RFC 8215, RFC 6052)",
	 FIXED6(0, 0x64, 0xff, 0x9b, 0, 1),
	 MASK6,
	 {7, 9, 10, 11},
	 false,
	 false},
	{"NAT64 local-use /64 (RFC 8215, RFC 6052)",
	 FIXED6(0, 0x64, 0xff, 0x9b, 0, 1),
	 MASK6,
	 {9, 10, 11, 12},
	 false,
	 false},
	{"NAT64 local-use /96 (RFC 8215, RFC 6052)",
	 FIXED6(0, 0x64, 0xff, 0x9b, 0, 1),
	 MASK6,
	 {12, 13, 14, 15},
	 false,
	 false},
	/* 2002:V4::/48: a 6to4 relay forwards to V4 (RFC 3056 2). */
	{"6to4 (RFC 3056)", {0x20, 0x02}, {0xff, 0xff}, {2, 3, 4, 5}, false, false},
	/* 2001:0::/32, server V4, flags, port, then the client's V4 with every
	 * bit inverted; a relay forwards to the client (RFC 4380 4). */
	{"Teredo (RFC 4380)", {0x20, 0x01, 0, 0}, {0xff, 0xff, 0xff, 0xff}, {12, 13, 14, 15}, true, false},
	/* Interface identifier 0:5efe:V4 (the u and g bits free: 200:5efe...)
	 * under any /64; an ISATAP router forwards to V4 (RFC 5214 6.1). */
	{"ISATAP (RFC 5214)",
	 {[8] = 0, [9] = 0, [10] = 0x5e, [11] = 0xfe},
	 {[8] = 0xfc, [9] = 0xff, [10] = 0xff, [11] = 0xff},
	 {12, 13, 14, 15},
	 false,
	 true},
};

void ng_v6_form_embed(const struct ng_v6_form *f, const struct ng_ip *v4, struct ng_ip *out)
{
	memset(out, 0, sizeof(*out));
	out->fam = NG_V6;
	for (int k = 0; k < 16; k++)
		out->a[k] = f->value[k] & f->mask[k];
	for (int k = 0; k < 4; k++)
		out->a[f->pos[k]] = f->inverted ? (uint8_t)~v4->a[k] : v4->a[k];
}

/* The form's mask with the IPv4 bytes in it: what the rule compares. */
static void form_mask(const struct ng_v6_form *f, uint8_t m[16])
{
	memcpy(m, f->mask, 16);
	for (int k = 0; k < 4; k++)
		m[f->pos[k]] = 0xff;
}

/* Some address inside `p` matches the pattern (value `v`, mask `m`). */
static bool prefix_meets(const struct ng_prefix *p, const uint8_t v[16], const uint8_t m[16])
{
	for (unsigned k = 0; k < 16; k++) {
		unsigned bits = p->plen > 8 * k ? p->plen - 8 * k : 0;
		uint8_t pm = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		if ((p->ip.a[k] ^ v[k]) & m[k] & pm)
			return false;
	}
	return true;
}

/* Adds an address to the metadata list once. */
static int add_metadata(struct ng_config *cfg, const struct ng_ip *ip)
{
	for (size_t i = 0; i < cfg->metadata.n; i++)
		if (ng_ip_eq(&cfg->metadata.v[i], ip))
			return 0;
	return ng_vec_push(&cfg->metadata, ip);
}

/* Adds, for each IPv4 address from index `from` on, its single-address IPv6
 * forms: a node with NAT64 or SIIT would otherwise carry an IPv6 connect
 * through to the IPv4 endpoint. Applies to built-in and extra addresses. */
static int add_v6_forms(struct ng_config *cfg, size_t from, struct ng_err *err)
{
	for (size_t i = from, n = cfg->metadata.n; i < n; i++) {
		struct ng_ip v4 = cfg->metadata.v[i], six = {.fam = NG_V6};

		if (v4.fam != NG_V4)
			continue;
		memcpy(six.a + 12, v4.a, 4);
		for (size_t f = 0; f < sizeof(single_forms) / sizeof(single_forms[0]); f++) {
			memcpy(six.a, single_forms[f], 12);
			if (add_metadata(cfg, &six) < 0)
				return ng_fail(err, NG_E_INTERNAL, "metadata list: out of memory");
		}
	}
	return 0;
}

int ng_config_builtin_metadata(struct ng_config *cfg, struct ng_err *err)
{
	for (int i = 0; builtin_metadata[i]; i++) {
		struct ng_ip ip;

		if (ng_ip_parse(builtin_metadata[i], &ip) < 0 || add_metadata(cfg, &ip) < 0)
			return ng_fail(err, NG_E_INTERNAL, "metadata list: out of memory");
	}
	return add_v6_forms(cfg, 0, err);
}

int ng_check_not_metadata(const struct ng_config *cfg, const struct ng_prefix *p, const char *what, int code,
			  struct ng_err *err)
{
	char ip[NG_IP_STRLEN];

	for (size_t i = 0; i < cfg->metadata.n; i++) {
		if (ng_prefix_contains_ip(p, &cfg->metadata.v[i])) {
			ng_ip_format(&cfg->metadata.v[i], ip, sizeof(ip));
			return ng_fail(err, code,
				       "%s: covers the cloud metadata address %s, which is always refused",
				       what, ip);
		}
	}
	if (p->ip.fam != NG_V6)
		return 0;
	for (int f = 0; f < NG_V6_FORMS; f++) {
		const struct ng_v6_form *form = &ng_v6_forms[f];
		uint8_t m[16];

		/* An ISATAP address can sit under any /64: an entry no longer
		 * than that is accepted, and the rules refuse those addresses. */
		if (form->anywhere && p->plen <= 64)
			continue;
		form_mask(form, m);
		for (size_t i = 0; i < cfg->metadata.n; i++) {
			struct ng_ip e;

			if (cfg->metadata.v[i].fam != NG_V4)
				continue;
			ng_v6_form_embed(form, &cfg->metadata.v[i], &e);
			if (!prefix_meets(p, e.a, m))
				continue;
			ng_ip_format(&cfg->metadata.v[i], ip, sizeof(ip));
			return ng_fail(err, code,
				       "%s: covers the %s form of the cloud metadata address %s, which is "
				       "always refused",
				       what, form->name, ip);
		}
	}
	return 0;
}

bool ng_ip_is_metadata_form(const struct ng_ip *ip, const struct ng_ip *v4, size_t n)
{
	if (ip->fam != NG_V6)
		return false;
	for (int f = 0; f < NG_V6_FORMS; f++) {
		uint8_t m[16];

		form_mask(&ng_v6_forms[f], m);
		for (size_t i = 0; i < n; i++) {
			struct ng_ip e;
			unsigned k = 0;

			if (v4[i].fam != NG_V4)
				continue;
			ng_v6_form_embed(&ng_v6_forms[f], &v4[i], &e);
			while (k < 16 && !((ip->a[k] ^ e.a[k]) & m[k]))
				k++;
			if (k == 16)
				return true;
		}
	}
	return false;
}

int ng_metadata_parse(const json_t *root, struct ng_config *cfg, struct ng_err *err)
{
	static const char *const keys[] = {"extra", NULL};
	const json_t *md = json_object_get(root, "metadata"), *extra, *v;
	size_t i, first_extra;

	if (ng_config_builtin_metadata(cfg, err) < 0)
		return -1;
	first_extra = cfg->metadata.n;
	if (!md)
		return 0;
	if (ng_json_check_object(md, "metadata", keys, err) < 0)
		return -1;
	extra = json_object_get(md, "extra");
	if (!extra)
		return 0;
	if (!json_is_array(extra))
		return ng_fail(err, NG_E_CONFIG, "metadata.extra: must be an array of IP addresses");
	if (ng_json_list_limit(extra, "metadata.extra", NG_CONFIG_MAX_SHORT_LIST, err) < 0)
		return -1;
	json_array_foreach(extra, i, v) {
		struct ng_ip ip;

		if (!json_is_string(v) || ng_ip_parse(json_string_value(v), &ip) < 0)
			return ng_fail(err, NG_E_CONFIG,
				       "metadata.extra[%zu]: not an IP address (single addresses only)", i);
		if (add_metadata(cfg, &ip) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return add_v6_forms(cfg, first_extra, err);
}
