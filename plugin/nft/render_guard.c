#include "nft/render_guard.h"

#include <arpa/inet.h>
#include <libnftnl/expr.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>

#include "nft/rulebuild.h"
#include "policy/metadata.h"

#define IPV6_RTHDR_TYPE 43  /* NEXTHDR_ROUTING */
#define IPOPT_LSRR_TYPE 131 /* loose source and record route */
#define IPOPT_SSRR_TYPE 137 /* strict source and record route */

void ng_guard_family_is(struct ng_rb *rb, const struct ng_guard_ctx *c, uint8_t fam)
{
	if (c->nfproto)
		ng_rb_nfproto(rb, fam);
	if (c->protocol) {
		uint16_t be = htons(fam == NG_V4 ? 0x0800 : 0x86dd);

		ng_rb_meta(rb, NFT_META_PROTOCOL, NG_W0);
		ng_rb_cmp(rb, NFT_CMP_EQ, &be, 2);
	}
}

/* `exthdr <type> exists` (IPv6) / `ip option <type> exists` (IPv4): the
 * kernel walks the header chain (ipv6_find_hdr) or the options
 * (ipv4_find_option) and writes 1 when it finds the type. */
static void exthdr_present(struct ng_rb *rb, uint32_t op, uint8_t type)
{
	struct nftnl_expr *e = ng_rb_add(rb, "exthdr");
	uint8_t one = 1;

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_DREG, ng_reg(NG_W0));
	nftnl_expr_set_u8(e, NFTNL_EXPR_EXTHDR_TYPE, type);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OFFSET, 0);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_LEN, 1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_FLAGS, NFT_EXTHDR_F_PRESENT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_EXTHDR_OP, op);
	ng_rb_cmp(rb, NFT_CMP_EQ, &one, 1);
}

int ng_render_no_source_route(struct ng_batch *b, const struct ng_guard_ctx *c, int fam)
{
	/* A packet whose first hop is allowed (the resolver) but which names
	 * another destination: an IPv6 routing header (type 4 needs no
	 * capability: IPV6_RTHDR) or an IPv4 source route (IP_OPTIONS). A
	 * router on the path that honours it (SRv6 enabled) forwards it past
	 * the allowlist. Nothing a pod needs sends either. */
	static const struct {
		uint8_t fam;
		uint32_t op;
		uint8_t type;
		const char *what;
	} rules[] = {
		{NG_V6, NFT_EXTHDR_OP_IPV6, IPV6_RTHDR_TYPE,
		 "IPv6 routing header (any type): names its own route"},
		{NG_V4, NFT_EXTHDR_OP_IPV4, IPOPT_LSRR_TYPE,
		 "IPv4 loose source route option: names its own route"},
		{NG_V4, NFT_EXTHDR_OP_IPV4, IPOPT_SSRR_TYPE,
		 "IPv4 strict source route option: names its own route"},
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ng_rb rb;

		if (fam && fam != (rules[i].fam == NG_V4 ? 4 : 6))
			continue;
		if (c->protocol && rules[i].fam == NG_V4) {
			/* In the netdev family the kernel's option finder
			 * (ipv4_find_option) reads from skb->data, which there is
			 * the Ethernet header: `ip option` never matches. So the
			 * guard refuses every IPv4 header with options (ihl != 5);
			 * the stack sends none a pod needs (IGMP's router alert
			 * is refused anyway). */
			uint8_t mask = 0x0f, five = 5;

			if (rules[i].type != IPOPT_LSRR_TYPE)
				continue;
			ng_rb_begin(&rb, b, c->chain);
			ng_guard_family_is(&rb, c, NG_V4);
			ng_rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 0, 1, NG_W0);
			ng_rb_masked_cmp(&rb, NFT_CMP_NEQ, &mask, &five, 1);
			ng_rb_verdict(&rb, NFT_JUMP, c->refuse);
			rc |= ng_rb_end(
				&rb, b,
				"IPv4 options (source routes among them): the guard cannot parse them");
			continue;
		}
		ng_rb_begin(&rb, b, c->chain);
		ng_guard_family_is(&rb, c, rules[i].fam);
		exthdr_present(&rb, rules[i].op, rules[i].type);
		ng_rb_verdict(&rb, NFT_JUMP, c->refuse);
		rc |= ng_rb_end(&rb, b, rules[i].what);
	}
	return rc ? -1 : 0;
}

int ng_render_metadata_forms(struct ng_batch *b, const struct ng_guard_ctx *c,
			     const struct ng_set_spec *embedded)
{
	int rc = 0;

	/* The set holds each form of each IPv4 metadata address with its free
	 * bits zero; masking the destination the same way finds it. */
	for (int f = 0; f < NG_V6_FORMS; f++) {
		const struct ng_v6_form *form = &ng_v6_forms[f];
		uint8_t mask[16];
		char comment[128];
		struct ng_rb rb;

		for (int k = 0; k < 16; k++)
			mask[k] = form->mask[k];
		for (int k = 0; k < 4; k++)
			mask[form->pos[k]] = 0xff;
		ng_rb_begin(&rb, b, c->chain);
		ng_guard_family_is(&rb, c, NG_V6);
		ng_rb_addr(&rb, NG_V6, true, NG_W0);
		ng_rb_mask(&rb, mask, 16);
		ng_rb_lookup(&rb, embedded->name, embedded->id);
		ng_rb_verdict(&rb, NFT_JUMP, c->refuse);
		snprintf(comment, sizeof(comment), "cloud metadata in its %s form: always refused",
			 form->name);
		rc |= ng_rb_end(&rb, b, comment);
	}
	return rc ? -1 : 0;
}
