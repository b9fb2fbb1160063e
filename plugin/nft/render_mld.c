#include "nft/render_mld.h"

#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>

#include "nft/render_chain.h"
#include "nft/rulebuild.h"

/* Offsets in the kernel's report (net/ipv6/mcast.c ip6_mc_hdr, mld_newpack,
 * add_grhead): the IPv6 header, the 8-byte hop-by-hop header, the 8-byte
 * MLDv2 report header (type, code, checksum, reserved, record count), then
 * 20-byte records (type, aux data length, source count, group) when they
 * carry no source. */
#define MLD_HBH     40
#define MLD_RESV    52
#define MLD_COUNT   54
#define MLD_RECORDS 56
#define MLD_REC_LEN 20

/* The network header bytes at `off` equal `v` (`len` bytes). */
static void nh_is(struct ng_rb *rb, uint32_t off, const void *v, uint32_t len)
{
	ng_rb_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, len, NG_W0);
	ng_rb_cmp(rb, NFT_CMP_EQ, v, len);
}

/* mld_report (n 0), mld_report_<n>: the chain entered with n records checked. */
static void chain_name(size_t n, char *buf, size_t len)
{
	if (n == 0)
		snprintf(buf, len, "%s", NG_MLD_CHAIN);
	else
		snprintf(buf, len, "%s_%zu", NG_MLD_CHAIN, n);
}

int ng_render_mld_chains(struct ng_batch *b, size_t groups)
{
	char name[32];

	for (size_t n = 0; groups > 0 && n <= groups; n++) {
		chain_name(n, name, sizeof(name));
		if (ng_render_chain(b, name, -1, NULL) < 0)
			return -1;
	}
	return 0;
}

int ng_render_mld_jump(struct ng_batch *b, const struct ng_guard_ctx *c, size_t groups, bool from_unspecified)
{
	/* flow 0, next header 0 (hop-by-hop), hop limit 1, router alert then
	 * PadN, ICMPv6 143 code 0, reserved 0 (the checksum between is not
	 * the sender's to choose: a wrong one is dropped by the receivers). */
	static const uint8_t head[4] = {0x60, 0, 0, 0}, nh_hop[2] = {0, 1};
	/* The hop-by-hop header and the ICMPv6 type and code are adjacent:
	 * one 10-byte compare, as nft itself merges them reading the rule. */
	static const uint8_t hbh_icmp[10] = {IPPROTO_ICMPV6, 0, 5, 2, 0, 0, 1, 0, 143, 0};
	static const uint8_t resv[2] = {0}, any[16] = {0};
	static const uint8_t ff02_16[16] = {0xff, 0x02, [15] = 0x16};
	struct ng_rb rb;

	if (groups == 0)
		return 0;
	ng_rb_begin(&rb, b, c->chain);
	ng_guard_family_is(&rb, c, NG_V6);
	nh_is(&rb, 0, head, 4);
	nh_is(&rb, 6, nh_hop, 2);
	if (from_unspecified)
		nh_is(&rb, 8, any, 16);
	nh_is(&rb, 24, ff02_16, 16);
	nh_is(&rb, MLD_HBH, hbh_icmp, 10);
	nh_is(&rb, MLD_RESV, resv, 2);
	ng_rb_verdict(&rb, NFT_JUMP, NG_MLD_CHAIN);
	return ng_rb_end(
		&rb, b,
		from_unspecified
			? "MLDv2 report from ::, as the kernel sends while its link-local address is "
			  "tentative: its records in " NG_MLD_CHAIN
			: "MLDv2 report in the kernel's layout: its records in " NG_MLD_CHAIN);
}

/* In chain mld_report_<n>: record n+1 is one the kernel writes for one of
 * the pod's groups: goto mld_report_<n+1>. */
static int record_rule(struct ng_batch *b, const struct ng_set_spec *set, size_t n)
{
	static const uint8_t none[3] = {0};
	uint32_t at = MLD_RECORDS + MLD_REC_LEN * (uint32_t)n;
	uint8_t lo = 2, hi = 4;
	char chain[32], next[32], comment[128];
	struct ng_rb rb;

	chain_name(n, chain, sizeof(chain));
	chain_name(n + 1, next, sizeof(next));
	ng_rb_begin(&rb, b, chain);
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, at, 1, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_GTE, &lo, 1);
	ng_rb_cmp(&rb, NFT_CMP_LTE, &hi, 1);
	nh_is(&rb, at + 1, none, 3);
	ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, at + 4, 16, NG_W0);
	ng_rb_lookup(&rb, set->name, set->id);
	ng_rb_verdict(&rb, NFT_GOTO, next);
	snprintf(comment, sizeof(comment),
		 "record %zu: to-exclude, to-include or is-exclude, no source, one of the pod's groups",
		 n + 1);
	return ng_rb_end(&rb, b, comment);
}

/* In chain mld_report_<n>: the report has n records and no byte more. */
static int end_rule(struct ng_batch *b, size_t n, unsigned link_hdr)
{
	uint16_t count = htons((uint16_t)n), plen = htons((uint16_t)(8 + 8 + MLD_REC_LEN * n));
	uint32_t len = link_hdr + MLD_RECORDS + MLD_REC_LEN * (uint32_t)n;
	char chain[32], comment[128];
	struct ng_rb rb;

	chain_name(n, chain, sizeof(chain));
	ng_rb_begin(&rb, b, chain);
	nh_is(&rb, MLD_COUNT, &count, 2);
	nh_is(&rb, 4, &plen, 2);
	ng_rb_meta(&rb, NFT_META_LEN, NG_W0);
	ng_rb_cmp(&rb, NFT_CMP_EQ, &len, 4);
	ng_rb_verdict(&rb, NF_ACCEPT, NULL);
	snprintf(comment, sizeof(comment), "%zu record%s of the pod's own groups, no byte more: accept", n,
		 n == 1 ? "" : "s");
	return ng_rb_end(&rb, b, comment);
}

int ng_render_mld(struct ng_batch *b, const struct ng_set_spec *set, unsigned link_hdr)
{
	size_t groups = set->ips->n;
	int rc = 0;

	/* A report the kernel writes names each group once, so at most
	 * `groups` records. */
	for (size_t n = 0; groups > 0 && n <= groups; n++) {
		if (n > 0)
			rc |= end_rule(b, n, link_hdr);
		if (n < groups)
			rc |= record_rule(b, set, n);
	}
	return rc ? -1 : 0;
}
