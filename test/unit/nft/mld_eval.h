/* Runs rendered rules against packet bytes, for test_render_mld.c: the
 * rules of one table collected from a batch, and an evaluator of the
 * expressions the MLD rules use (payload from the network header, cmp,
 * meta len and the family checks, a lookup in mld_v6, immediate verdicts
 * with jump and goto), walked as the kernel walks chains. Any other
 * expression fails the test: it is not what these rules are made of. */
#ifndef NG_TEST_MLD_EVAL_H
#define NG_TEST_MLD_EVAL_H

#include "render_fixtures.h" // IWYU pragma: export

#include "nft/render_mld.h" // IWYU pragma: export

/* The rules of one table (family, name), in batch order. */
struct table_rules {
	uint8_t family;
	const char *table;
	struct nftnl_rule *v[256];
	int n;
};

__attribute__((unused)) static int keep_rules(const struct nlmsghdr *nlh, void *data)
{
	struct table_rules *t = data;
	struct nftnl_rule *r;

	if (nlh->nlmsg_type != nft(NFT_MSG_NEWRULE) || fam_of(nlh) != t->family)
		return 0;
	r = nftnl_rule_alloc();
	assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
	if (strcmp(nftnl_rule_get_str(r, NFTNL_RULE_TABLE), t->table) != 0 || t->n >= 256) {
		nftnl_rule_free(r);
		return 0;
	}
	t->v[t->n++] = r;
	return 0;
}

__attribute__((unused)) static void rules_free(struct table_rules *t)
{
	for (int i = 0; i < t->n; i++)
		nftnl_rule_free(t->v[i]);
	t->n = 0;
}

/* A packet from its IPv6 header; meta len as the hook sees it. */
struct pkt {
	const uint8_t *nh;
	uint32_t len, meta_len;
	const ng_ip_vec *groups; /* what @mld_v6 holds */
};

enum { V_NONE, V_ACCEPT, V_DROP, V_JUMP, V_GOTO };

/* One rule: matched or not; its verdict and target when it has one. */
static bool eval_rule(struct nftnl_rule *r, const struct pkt *p, int *verdict, const char **target)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	struct nftnl_expr *e;
	uint8_t reg[64] = {0};
	uint32_t reglen = 0;
	bool match = true, family_check = false;

	*verdict = V_NONE;
	while (match && (e = nftnl_expr_iter_next(it))) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

		if (!strcmp(name, "payload")) {
			uint32_t off = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET),
				 len = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN);

			assert_int_equal(nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE),
					 NFT_PAYLOAD_NETWORK_HEADER);
			match = off + len <= p->len; /* past the end: the kernel breaks */
			if (match)
				memcpy(reg, p->nh + off, len);
			reglen = len;
		} else if (!strcmp(name, "meta")) {
			uint32_t key = nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY);

			/* nfproto/protocol: the family check, IPv6 here. */
			family_check = key == NFT_META_NFPROTO || key == NFT_META_PROTOCOL;
			assert_true(family_check || key == NFT_META_LEN);
			memcpy(reg, &p->meta_len, 4);
			reglen = 4;
		} else if (!strcmp(name, "cmp")) {
			uint32_t dlen = 0, op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP);
			const void *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &dlen);
			int c = memcmp(reg, d, dlen);

			assert_true(dlen <= reglen);
			if (family_check) {
				family_check = false;
				continue;
			}
			match = (op == NFT_CMP_EQ && c == 0) || (op == NFT_CMP_NEQ && c != 0) ||
				(op == NFT_CMP_GTE && c >= 0) || (op == NFT_CMP_LTE && c <= 0) ||
				(op == NFT_CMP_GT && c > 0) || (op == NFT_CMP_LT && c < 0);
		} else if (!strcmp(name, "lookup")) {
			bool in = false;

			assert_string_equal(nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET), "mld_v6");
			assert_int_equal(reglen, 16);
			for (size_t i = 0; i < p->groups->n; i++)
				in |= memcmp(reg, p->groups->v[i].a, 16) == 0;
			match = in;
		} else if (!strcmp(name, "immediate")) {
			int v = (int)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

			*verdict = v == NF_ACCEPT  ? V_ACCEPT
				   : v == NFT_JUMP ? V_JUMP
				   : v == NFT_GOTO ? V_GOTO
						   : V_DROP;
			*target = *verdict >= V_JUMP ? nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN) : NULL;
		} else {
			fail_msg("expression %s in an MLD rule", name);
		}
	}
	nftnl_expr_iter_destroy(it);
	return match;
}

/* Runs chain `chain`: V_ACCEPT, V_DROP, or V_NONE when it falls off (a
 * return to the rule after the jump). */
static int run_chain(const struct table_rules *t, const char *chain, const struct pkt *p, int depth)
{
	assert_true(depth < 64);
	for (int i = 0; i < t->n; i++) {
		const char *target = NULL;
		int v;

		if (strcmp(nftnl_rule_get_str(t->v[i], NFTNL_RULE_CHAIN), chain) != 0 ||
		    !eval_rule(t->v[i], p, &v, &target))
			continue;
		if (v == V_GOTO)
			return run_chain(t, target, p, depth + 1);
		if (v == V_JUMP) {
			v = run_chain(t, target, p, depth + 1);
			if (v == V_NONE)
				continue;
		}
		if (v != V_NONE)
			return v;
	}
	return V_NONE;
}

/* The rule's verdict is `jump mld_report`. */
static bool jumps_to_mld(struct nftnl_rule *r)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	struct nftnl_expr *e;
	bool yes = false;

	while ((e = nftnl_expr_iter_next(it)))
		if (!strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "immediate") &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) == (uint32_t)NFT_JUMP)
			yes = !strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN), NG_MLD_CHAIN);
	nftnl_expr_iter_destroy(it);
	return yes;
}

/* What the MLD rules of base chain `base` do with the packet: each rule
 * there that jumps to mld_report, in order (from :: first). */
__attribute__((unused)) static bool accepted(const struct table_rules *t, const char *base,
					     const struct pkt *p)
{
	for (int i = 0; i < t->n; i++) {
		const char *target = NULL;
		int v;

		if (strcmp(nftnl_rule_get_str(t->v[i], NFTNL_RULE_CHAIN), base) != 0 ||
		    !jumps_to_mld(t->v[i]))
			continue;
		if (!eval_rule(t->v[i], p, &v, &target))
			continue;
		if (run_chain(t, NG_MLD_CHAIN, p, 1) == V_ACCEPT)
			return true;
	}
	return false;
}

#endif
