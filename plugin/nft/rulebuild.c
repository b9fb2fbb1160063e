#include "nft/rulebuild.h"

#include <linux/netfilter/xt_NFQUEUE.h>

#include <arpa/inet.h>
#include <stdio.h> // IWYU pragma: keep (libnftnl/expr.h uses FILE without including it)
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr.h"

/* The kernel addresses 4-byte registers by word; words 4.. are the data
 * registers. It reports a word on a 16-byte boundary by its legacy 16-byte
 * register number (NFT_REG_1..4) and others as NFT_REG32_xx, so we name
 * them the same way, or CHECK would see a difference where there is none. */
uint32_t ng_reg(unsigned word)
{
	return word % 4 == 0 ? word / 4 : word - 4 + NFT_REG32_00;
}

struct nftnl_expr *ng_rb_add(struct ng_rb *rb, const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	if (!e) {
		rb->oom = true;
		return NULL;
	}
	nftnl_rule_add_expr(rb->r, e);
	return e;
}

void ng_rb_meta(struct ng_rb *rb, uint32_t key, unsigned word)
{
	struct nftnl_expr *e = ng_rb_add(rb, "meta");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, ng_reg(word));
}

void ng_rb_cmp(struct ng_rb *rb, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = ng_rb_add(rb, "cmp");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, ng_reg(NG_W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

void ng_rb_payload(struct ng_rb *rb, uint32_t base, uint32_t offset, uint32_t len, unsigned word)
{
	struct nftnl_expr *e = ng_rb_add(rb, "payload");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, ng_reg(word));
}

static void lookup(struct ng_rb *rb, const char *set, uint32_t set_id, uint32_t flags)
{
	struct nftnl_expr *e = ng_rb_add(rb, "lookup");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, ng_reg(NG_W0));
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, set_id);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, flags); /* the kernel reports it */
}

void ng_rb_lookup(struct ng_rb *rb, const char *set, uint32_t set_id)
{
	lookup(rb, set, set_id, 0);
}

void ng_rb_lookup_inv(struct ng_rb *rb, const char *set, uint32_t set_id)
{
	lookup(rb, set, set_id, NFT_LOOKUP_F_INV);
}

void ng_rb_verdict(struct ng_rb *rb, int verdict, const char *chain)
{
	struct nftnl_expr *e = ng_rb_add(rb, "immediate");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
}

#define XT_INFO_LEN 8 /* XT_ALIGN(sizeof(struct xt_NFQ_info_v3)) */

void ng_rb_nfqueue(struct ng_rb *rb, uint16_t num)
{
	/* xt's struct, padded to XT_ALIGN (8): nft_compat insists on it.
	 * libnftnl keeps (and later frees) the pointer it is given. */
	struct xt_NFQ_info_v3 q = {.queuenum = num, .queues_total = 1, .flags = 0};
	struct nftnl_expr *e = ng_rb_add(rb, "target");
	uint8_t *info = calloc(1, XT_INFO_LEN);

	if (!e || !info) {
		free(info);
		rb->oom = true;
		return;
	}
	memcpy(info, &q, sizeof(q));
	nftnl_expr_set_str(e, NFTNL_EXPR_TG_NAME, "NFQUEUE");
	nftnl_expr_set_u32(e, NFTNL_EXPR_TG_REV, 3);
	/* The expression owns `info` from here (libnftnl frees it with the
	 * expression), which the analyzer cannot see. */
	nftnl_expr_set(e, NFTNL_EXPR_TG_INFO, info, XT_INFO_LEN);
} // NOLINT(clang-analyzer-unix.Malloc)

void ng_rb_mask(struct ng_rb *rb, const void *mask, uint32_t len)
{
	struct nftnl_expr *e = ng_rb_add(rb, "bitwise");
	static const uint8_t zero[16];

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, ng_reg(NG_W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, ng_reg(NG_W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
}

void ng_rb_masked_cmp(struct ng_rb *rb, uint32_t op, const void *mask, const void *value, uint32_t len)
{
	ng_rb_mask(rb, mask, len);
	ng_rb_cmp(rb, op, value, len);
}

/* ct state & mask != 0 */
static void ct_state(struct ng_rb *rb, uint32_t mask, uint32_t op)
{
	struct nftnl_expr *e = ng_rb_add(rb, "ct");
	uint32_t zero = 0;

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, ng_reg(NG_W0));
	ng_rb_masked_cmp(rb, op, &mask, &zero, 4);
}

void ng_rb_ct_state(struct ng_rb *rb, uint32_t mask)
{
	ct_state(rb, mask, NFT_CMP_NEQ);
}

void ng_rb_ct_state_none(struct ng_rb *rb, uint32_t mask)
{
	ct_state(rb, mask, NFT_CMP_EQ);
}

void ng_rb_ct_orig_sport(struct ng_rb *rb, uint16_t port)
{
	struct nftnl_expr *e = ng_rb_add(rb, "ct");
	uint16_t be = htons(port);

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_PROTO_SRC);
	nftnl_expr_set_u8(e, NFTNL_EXPR_CT_DIR, IP_CT_DIR_ORIGINAL);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, ng_reg(NG_W0));
	ng_rb_cmp(rb, NFT_CMP_EQ, &be, 2);
}

void ng_rb_counter(struct ng_rb *rb, const char *name)
{
	ng_rb_objref(rb, NFT_OBJECT_COUNTER, name);
}

void ng_rb_reject(struct ng_rb *rb, uint32_t type, uint8_t code)
{
	struct nftnl_expr *e = ng_rb_add(rb, "reject");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
}

void ng_rb_objref(struct ng_rb *rb, uint32_t type, const char *name)
{
	struct nftnl_expr *e = ng_rb_add(rb, "objref");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, type);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
}

void ng_rb_log(struct ng_rb *rb, const char *prefix, uint16_t group)
{
	struct nftnl_expr *e = ng_rb_add(rb, "log");

	if (!e)
		return;
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
}

void ng_rb_log_copy(struct ng_rb *rb, uint16_t group, uint32_t snaplen)
{
	struct nftnl_expr *e = ng_rb_add(rb, "log");

	if (!e)
		return;
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOG_SNAPLEN, snaplen);
	nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_QTHRESHOLD, 1);
}

void ng_rb_nfproto(struct ng_rb *rb, uint8_t fam)
{
	uint8_t v = fam == NG_V4 ? NFPROTO_IPV4 : NFPROTO_IPV6;

	ng_rb_meta(rb, NFT_META_NFPROTO, NG_W0);
	ng_rb_cmp(rb, NFT_CMP_EQ, &v, 1);
}

void ng_rb_l4proto(struct ng_rb *rb, uint8_t proto)
{
	ng_rb_meta(rb, NFT_META_L4PROTO, NG_W0);
	ng_rb_cmp(rb, NFT_CMP_EQ, &proto, 1);
}

/* Loads ip saddr/daddr into the first data words; returns the next word. */
unsigned ng_rb_addr(struct ng_rb *rb, uint8_t fam, bool dst, unsigned word)
{
	uint32_t off = fam == NG_V4 ? (dst ? 16 : 12) : (dst ? 24 : 8);

	ng_rb_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, (uint32_t)ng_ip_len(fam), word);
	return word + (uint32_t)ng_ip_len(fam) / 4;
}

/* Starts a rule in `chain`; the comment is what nft shows after the rule. */
void ng_rb_begin(struct ng_rb *rb, const struct ng_batch *b, const char *chain)
{
	rb->oom = false;
	rb->r = nftnl_rule_alloc();
	if (!rb->r) {
		rb->oom = true;
		return;
	}
	nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, b->table);
	nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, b->family);
}

int ng_rb_end(struct ng_rb *rb, struct ng_batch *b, const char *comment)
{
	struct nftnl_udata_buf *ud;
	struct nlmsghdr *nlh;
	int rc = -1;

	if (!rb->r)
		return -1;
	ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);
	if (ud && !rb->oom && nftnl_udata_put_strz(ud, NFTNL_UDATA_RULE_COMMENT, comment)) {
		nftnl_rule_set_data(rb->r, NFTNL_RULE_USERDATA, nftnl_udata_buf_data(ud),
				    nftnl_udata_buf_len(ud));
		nlh = ng_batch_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND, "rule in chain %s: %s",
				   nftnl_rule_get_str(rb->r, NFTNL_RULE_CHAIN), comment);
		nftnl_rule_nlmsg_build_payload(nlh, rb->r);
		ng_batch_commit_msg(b);
		rc = 0;
	}
	nftnl_udata_buf_free(ud);
	nftnl_rule_free(rb->r);
	rb->r = NULL;
	return rc;
}

/* `ip daddr . meta l4proto . th dport @set accept` and friends. */