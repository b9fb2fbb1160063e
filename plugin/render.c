/* The ruleset, as nft would print it (see README "The ruleset"):
 *
 * table inet boxxkite_netguard {
 *   chain egress {   type filter hook output priority filter; policy drop;
 *     oif "lo" accept
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip daddr @metadata_v4 jump refuse_metadata        (and ip6 ... _v6)
 *     ip daddr . meta l4proto . th dport @dns_v4 accept  (and _v6)
 *     ip daddr . meta l4proto . th dport @allow_v4 accept
 *     ip daddr . meta l4proto . th dport @names_v4 accept
 *     ip6 daddr . icmpv6 type @nd_v6 accept
 *     jump refuse_egress
 *   }
 *   chain ingress {  type filter hook input priority filter; policy drop;
 *     iif "lo" accept
 *     ct state established,related accept
 *     ct state invalid drop
 *     ip saddr . tcp dport @ingress_v4 accept            (and _v6)
 *     meta l4proto tcp ip saddr @node_v4 accept           (and _v6)
 *     ip6 hoplimit 255 icmpv6 type 135-136 accept
 *     counter name "ingress_denied" drop
 *   }
 *   chain refuse_metadata { counter name "metadata_denied"
 *     meta l4proto tcp reject with tcp reset; reject with icmpx admin-prohibited }
 *   chain refuse_egress { counter name "egress_denied"; <denyAction> }
 * }
 *
 * Expressions are encoded the way nft 1.0 encodes them, so `nft list
 * ruleset` prints the rules above and reviewers can diff against it. */
#include "render.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

/* nft's datatype numbers (include/datatype.h), 6 bits per concat field, and
 * its byte-order tag, stored in set userdata so nft can print elements. */
#define DT_IPADDR 7
#define DT_IP6ADDR 8
#define DT_INET_PROTO 12
#define DT_INET_SERVICE 13
#define DT_ICMP6_TYPE 29
#define DT_BITS 6
#define NFT_BYTEORDER_BIG 2

#define ELEMS_PER_MSG 512 /* keeps one element list well under 64 KiB */

enum set_kind {
	SK_ADDR,            /* ipv4_addr / ipv6_addr */
	SK_ADDR_PROTO_PORT, /* addr . inet_proto . inet_service */
	SK_ADDR_PORT,       /* addr . inet_service */
	SK_ADDR_ICMP6,      /* ipv6_addr . icmpv6_type */
};

struct set_spec {
	const char *name;
	uint8_t fam;
	enum set_kind kind;
	bool interval, timeout;
	const ng_ip_vec *ips;     /* SK_ADDR */
	const ng_elem_vec *elems; /* the others */
	uint32_t id;
};

/* ---- keys ---------------------------------------------------------------- */

static unsigned addr_len(uint8_t fam)
{
	return (unsigned)ng_ip_len(fam);
}

/* Field byte lengths of a set's key, in order; returns the field count. */
static int key_fields(const struct set_spec *s, uint8_t len[3])
{
	len[0] = (uint8_t)addr_len(s->fam);
	switch (s->kind) {
	case SK_ADDR:
		return 1;
	case SK_ADDR_PROTO_PORT:
		len[1] = 1;
		len[2] = 2;
		return 3;
	case SK_ADDR_PORT:
		len[1] = 2;
		return 2;
	case SK_ADDR_ICMP6:
		len[1] = 1;
		return 2;
	}
	return 1;
}

static uint32_t key_type(const struct set_spec *s)
{
	uint32_t a = s->fam == NG_V4 ? DT_IPADDR : DT_IP6ADDR;

	switch (s->kind) {
	case SK_ADDR:
		return a;
	case SK_ADDR_PROTO_PORT:
		return ((a << DT_BITS | DT_INET_PROTO) << DT_BITS) | DT_INET_SERVICE;
	case SK_ADDR_PORT:
		return a << DT_BITS | DT_INET_SERVICE;
	case SK_ADDR_ICMP6:
		return a << DT_BITS | DT_ICMP6_TYPE;
	}
	return a;
}

/* Registers hold 4-byte words, so each concatenated field is padded to a
 * multiple of 4 bytes in the key. */
static uint32_t key_len(const struct set_spec *s)
{
	uint8_t len[3];
	int n = key_fields(s, len);
	uint32_t total = 0;

	for (int i = 0; i < n; i++)
		total += (len[i] + 3u) & ~3u;
	return total;
}

/* Writes the start (or end) key of an element; returns its length. */
static uint32_t elem_key(const struct set_spec *s, const struct ng_elem *e, bool end, uint8_t *key)
{
	uint32_t off = addr_len(s->fam);
	uint16_t port = htons(end ? e->p_hi : e->p_lo);

	memset(key, 0, 64);
	memcpy(key, end ? e->hi.a : e->lo.a, off);
	switch (s->kind) {
	case SK_ADDR:
		break;
	case SK_ADDR_PROTO_PORT:
		key[off] = e->proto;
		memcpy(key + off + 4, &port, 2);
		off += 8;
		break;
	case SK_ADDR_PORT:
		memcpy(key + off, &port, 2);
		off += 4;
		break;
	case SK_ADDR_ICMP6:
		key[off] = (uint8_t)(end ? e->p_hi : e->p_lo);
		off += 4;
		break;
	}
	return s->kind == SK_ADDR ? addr_len(s->fam) : off;
}

static size_t spec_count(const struct set_spec *s)
{
	return s->kind == SK_ADDR ? s->ips->n : s->elems->n;
}

/* ---- sets ---------------------------------------------------------------- */

static int render_set(struct ng_batch *b, struct set_spec *s)
{
	struct nftnl_set *set = nftnl_set_alloc();
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(64);
	uint8_t fields[3];
	int nfields = key_fields(s, fields);
	uint32_t flags = 0;
	struct nlmsghdr *nlh;
	size_t n = spec_count(s);

	if (!set || !ud) {
		nftnl_set_free(set);
		nftnl_udata_buf_free(ud);
		return -1;
	}
	s->id = b->next_set_id++;
	/* Static sets are constant: after this transaction their elements can
	 * only change by replacing the whole table. Name sets are not, so
	 * their timed-out addresses can be refreshed. */
	if (!s->timeout)
		flags |= NFT_SET_CONSTANT;
	if (s->interval)
		flags |= NFT_SET_INTERVAL | NFT_SET_CONCAT;
	if (s->timeout)
		flags |= NFT_SET_TIMEOUT;

	nftnl_set_set_str(set, NFTNL_SET_TABLE, b->table);
	nftnl_set_set_str(set, NFTNL_SET_NAME, s->name);
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
	nftnl_set_set_u32(set, NFTNL_SET_ID, s->id);
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, flags);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, key_type(s));
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, key_len(s));
	if (s->interval)
		nftnl_set_set_data(set, NFTNL_SET_DESC_CONCAT, fields, (uint32_t)nfields);
	if ((flags & NFT_SET_CONSTANT) && n > 0)
		nftnl_set_set_u32(set, NFTNL_SET_DESC_SIZE, (uint32_t)n);
	nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER, s->kind == SK_ADDR ? NFT_BYTEORDER_BIG : 0);
	nftnl_set_set_data(set, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);

	nlh = ng_batch_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE, "set %s", s->name);
	nftnl_set_nlmsg_build_payload(nlh, set);
	ng_batch_commit_msg(b);
	nftnl_set_free(set);

	for (size_t start = 0; start < n; start += ELEMS_PER_MSG) {
		size_t end = start + ELEMS_PER_MSG < n ? start + ELEMS_PER_MSG : n;
		struct nlattr *list;

		nlh = ng_batch_msg(b, NFT_MSG_NEWSETELEM, NLM_F_CREATE, "set %s elements %zu-%zu", s->name,
				   start + 1, end);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, b->table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_LIST_SET_ID, htonl(s->id));
		list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
		for (size_t i = start; i < end; i++) {
			struct nftnl_set_elem *e = nftnl_set_elem_alloc();
			struct ng_elem host;
			const struct ng_elem *el;
			struct nlattr *one;
			uint8_t key[64];
			uint32_t klen;

			if (!e)
				return -1;
			if (s->kind == SK_ADDR) {
				host = (struct ng_elem){.lo = s->ips->v[i], .hi = s->ips->v[i]};
				el = &host;
			} else {
				el = &s->elems->v[i];
			}
			klen = elem_key(s, el, false, key);
			nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, klen);
			if (s->interval) {
				klen = elem_key(s, el, true, key);
				nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY_END, key, klen);
			}
			if (s->timeout && el->timeout)
				nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT, (uint64_t)el->timeout * 1000);
			/* Each element nested as NFTA_LIST_ELEM, as the kernel dumps
			 * them: libnftnl's own list builder numbers the nests 1, 2,
			 * 3..., which the kernel ignores but libnftnl's parser (and so
			 * CHECK's reading of this batch) refuses. */
			one = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
			nftnl_set_elem_nlmsg_build_payload(nlh, e);
			mnl_attr_nest_end(nlh, one);
			nftnl_set_elem_free(e);
		}
		mnl_attr_nest_end(nlh, list);
		ng_batch_commit_msg(b);
	}
	return 0;
}

/* ---- rules --------------------------------------------------------------- */

/* Builds one rule; any allocation failure is remembered and reported once. */
struct rb {
	struct nftnl_rule *r;
	bool oom;
};

/* The kernel addresses 4-byte registers by word; words 4.. are the data
 * registers. It reports a word on a 16-byte boundary by its legacy 16-byte
 * register number (NFT_REG_1..4) and others as NFT_REG32_xx, so we name
 * them the same way, or CHECK would see a difference where there is none. */
static uint32_t reg(unsigned word)
{
	return word % 4 == 0 ? word / 4 : word - 4 + NFT_REG32_00;
}
#define W0 4 /* first data word */

static struct nftnl_expr *rb_add(struct rb *rb, const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc(name);

	if (!e) {
		rb->oom = true;
		return NULL;
	}
	nftnl_rule_add_expr(rb->r, e);
	return e;
}

static void rb_meta(struct rb *rb, uint32_t key, unsigned word)
{
	struct nftnl_expr *e = rb_add(rb, "meta");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
	nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, reg(word));
}

static void rb_cmp(struct rb *rb, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = rb_add(rb, "cmp");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, reg(W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
}

static void rb_payload(struct rb *rb, uint32_t base, uint32_t offset, uint32_t len, unsigned word)
{
	struct nftnl_expr *e = rb_add(rb, "payload");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, reg(word));
}

static void rb_lookup(struct rb *rb, const struct set_spec *s)
{
	struct nftnl_expr *e = rb_add(rb, "lookup");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, reg(W0));
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, s->name);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, s->id);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, 0); /* the kernel reports it */
}

static void rb_verdict(struct rb *rb, int verdict, const char *chain)
{
	struct nftnl_expr *e = rb_add(rb, "immediate");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)verdict);
	if (chain)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
}

/* ct state & mask != 0 */
static void rb_ct_state(struct rb *rb, uint32_t mask)
{
	struct nftnl_expr *e = rb_add(rb, "ct");
	uint32_t zero = 0;

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, reg(W0));
	e = rb_add(rb, "bitwise");
	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg(W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg(W0));
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 4);
	rb_cmp(rb, NFT_CMP_NEQ, &zero, 4);
}

static void rb_counter(struct rb *rb, const char *name)
{
	struct nftnl_expr *e = rb_add(rb, "objref");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
	nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name);
}

static void rb_reject(struct rb *rb, uint32_t type, uint8_t code)
{
	struct nftnl_expr *e = rb_add(rb, "reject");

	if (!e)
		return;
	nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
	nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
}

static void rb_nfproto(struct rb *rb, uint8_t fam)
{
	uint8_t v = fam == NG_V4 ? NFPROTO_IPV4 : NFPROTO_IPV6;

	rb_meta(rb, NFT_META_NFPROTO, W0);
	rb_cmp(rb, NFT_CMP_EQ, &v, 1);
}

static void rb_l4proto(struct rb *rb, uint8_t proto)
{
	rb_meta(rb, NFT_META_L4PROTO, W0);
	rb_cmp(rb, NFT_CMP_EQ, &proto, 1);
}

/* Loads ip saddr/daddr into the first data words; returns the next word. */
static unsigned rb_addr(struct rb *rb, uint8_t fam, bool dst, unsigned word)
{
	uint32_t off = fam == NG_V4 ? (dst ? 16 : 12) : (dst ? 24 : 8);

	rb_payload(rb, NFT_PAYLOAD_NETWORK_HEADER, off, addr_len(fam), word);
	return word + addr_len(fam) / 4;
}

/* Starts a rule in `chain`; the comment is what nft shows after the rule. */
static void rb_begin(struct rb *rb, const struct ng_batch *b, const char *chain)
{
	rb->oom = false;
	rb->r = nftnl_rule_alloc();
	if (!rb->r) {
		rb->oom = true;
		return;
	}
	nftnl_rule_set_str(rb->r, NFTNL_RULE_TABLE, b->table);
	nftnl_rule_set_str(rb->r, NFTNL_RULE_CHAIN, chain);
	nftnl_rule_set_u32(rb->r, NFTNL_RULE_FAMILY, NFPROTO_INET);
}

static int rb_end(struct rb *rb, struct ng_batch *b, const char *comment)
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
		nlh = ng_batch_msg(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
				   "rule in chain %s: %s", nftnl_rule_get_str(rb->r, NFTNL_RULE_CHAIN),
				   comment);
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
static int rule_lookup_accept(struct ng_batch *b, const char *chain, bool dst,
			      const struct set_spec *s, const char *comment)
{
	struct rb rb;
	unsigned w;

	rb_begin(&rb, b, chain);
	if (s->kind == SK_ADDR_ICMP6)
		rb_l4proto(&rb, IPPROTO_ICMPV6);
	if (s->kind == SK_ADDR_PORT)
		rb_l4proto(&rb, IPPROTO_TCP);
	rb_nfproto(&rb, s->fam);
	w = rb_addr(&rb, s->fam, dst, W0);
	switch (s->kind) {
	case SK_ADDR:
		break;
	case SK_ADDR_PROTO_PORT:
		rb_meta(&rb, NFT_META_L4PROTO, w);
		rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, w + 1);
		break;
	case SK_ADDR_PORT:
		rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, w);
		break;
	case SK_ADDR_ICMP6:
		rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, w);
		break;
	}
	rb_lookup(&rb, s);
	rb_verdict(&rb, NF_ACCEPT, NULL);
	return rb_end(&rb, b, comment);
}

static int rule_common_head(struct ng_batch *b, const char *chain, bool egress)
{
	struct rb rb;
	uint32_t lo = 1; /* the loopback device is ifindex 1 in every netns */

	rb_begin(&rb, b, chain);
	rb_meta(&rb, egress ? NFT_META_OIF : NFT_META_IIF, W0);
	rb_cmp(&rb, NFT_CMP_EQ, &lo, 4);
	rb_verdict(&rb, NF_ACCEPT, NULL);
	if (rb_end(&rb, b, "loopback") < 0)
		return -1;

	rb_begin(&rb, b, chain);
	rb_ct_state(&rb, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
	rb_verdict(&rb, NF_ACCEPT, NULL);
	if (rb_end(&rb, b, "replies and related packets of allowed connections") < 0)
		return -1;

	rb_begin(&rb, b, chain);
	rb_ct_state(&rb, NF_CT_STATE_INVALID_BIT);
	rb_verdict(&rb, NF_DROP, NULL);
	return rb_end(&rb, b, "invalid packets");
}

/* counter name NAME, then reject (TCP reset / ICMP admin-prohibited) or drop */
static int refuse_chain(struct ng_batch *b, const char *chain, const char *counter, bool reject,
			const char *what)
{
	struct rb rb;
	char c[NFTNL_UDATA_COMMENT_MAXLEN];

	rb_begin(&rb, b, chain);
	rb_counter(&rb, counter);
	if (!reject)
		rb_verdict(&rb, NF_DROP, NULL);
	snprintf(c, sizeof(c), "%s: count%s", what, reject ? "" : " and drop");
	if (rb_end(&rb, b, c) < 0)
		return -1;
	if (!reject)
		return 0;

	rb_begin(&rb, b, chain);
	rb_l4proto(&rb, IPPROTO_TCP);
	rb_reject(&rb, NFT_REJECT_TCP_RST, 0);
	snprintf(c, sizeof(c), "%s: TCP reset, so connect() fails at once", what);
	if (rb_end(&rb, b, c) < 0)
		return -1;

	rb_begin(&rb, b, chain);
	rb_reject(&rb, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
	snprintf(c, sizeof(c), "%s: ICMP administratively prohibited", what);
	return rb_end(&rb, b, c);
}

/* ---- table, chains, counters -------------------------------------------- */

static int render_table(struct ng_batch *b, uint16_t type, uint16_t flags, const char *comment,
			const char *what)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t)
		return -1;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, b->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (comment && *comment) {
		struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);

		if (!ud || !nftnl_udata_put_strz(ud, NFTNL_UDATA_TABLE_COMMENT, comment)) {
			nftnl_udata_buf_free(ud);
			nftnl_table_free(t);
			return -1;
		}
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
				     nftnl_udata_buf_len(ud));
		nftnl_udata_buf_free(ud);
	}
	nlh = ng_batch_msg(b, type, flags, "table inet %s (%s)", b->table, what);
	nftnl_table_nlmsg_build_payload(nlh, t);
	ng_batch_commit_msg(b);
	nftnl_table_free(t);
	return 0;
}

static int render_chain(struct ng_batch *b, const char *name, int hook)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (!c)
		return -1;
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, b->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_DROP);
	}
	nlh = ng_batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "chain %s", name);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	ng_batch_commit_msg(b);
	nftnl_chain_free(c);
	return 0;
}

static int render_counter(struct ng_batch *b, const char *name)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;

	if (!o)
		return -1;
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, b->table);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_COUNTER);
	nlh = ng_batch_msg(b, NFT_MSG_NEWOBJ, NLM_F_CREATE, "counter %s", name);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	ng_batch_commit_msg(b);
	nftnl_obj_free(o);
	return 0;
}

/* ---- the whole ruleset --------------------------------------------------- */

enum {
	S_META4, S_META6, S_DNS4, S_DNS6, S_ALLOW4, S_ALLOW6, S_NAMES4, S_NAMES6,
	S_ND6, S_IN4, S_IN6, S_NODE4, S_NODE6, S_COUNT
};

static int render_body(const struct ng_policy *p, struct ng_batch *b)
{
	struct set_spec sets[S_COUNT] = {
		[S_META4] = {"metadata_v4", NG_V4, SK_ADDR, false, false, &p->metadata[0], NULL, 0},
		[S_META6] = {"metadata_v6", NG_V6, SK_ADDR, false, false, &p->metadata[1], NULL, 0},
		[S_DNS4] = {"dns_v4", NG_V4, SK_ADDR_PROTO_PORT, false, false, NULL, &p->dns[0], 0},
		[S_DNS6] = {"dns_v6", NG_V6, SK_ADDR_PROTO_PORT, false, false, NULL, &p->dns[1], 0},
		[S_ALLOW4] = {"allow_v4", NG_V4, SK_ADDR_PROTO_PORT, true, false, NULL, &p->allow[0], 0},
		[S_ALLOW6] = {"allow_v6", NG_V6, SK_ADDR_PROTO_PORT, true, false, NULL, &p->allow[1], 0},
		[S_NAMES4] = {NG_SET_NAMES_V4, NG_V4, SK_ADDR_PROTO_PORT, true, true, NULL, &p->names[0], 0},
		[S_NAMES6] = {NG_SET_NAMES_V6, NG_V6, SK_ADDR_PROTO_PORT, true, true, NULL, &p->names[1], 0},
		[S_ND6] = {"nd_v6", NG_V6, SK_ADDR_ICMP6, true, false, NULL, &p->nd6, 0},
		[S_IN4] = {"ingress_v4", NG_V4, SK_ADDR_PORT, true, false, NULL, &p->ingress[0], 0},
		[S_IN6] = {"ingress_v6", NG_V6, SK_ADDR_PORT, true, false, NULL, &p->ingress[1], 0},
		[S_NODE4] = {"node_v4", NG_V4, SK_ADDR, false, false, &p->node[0], NULL, 0},
		[S_NODE6] = {"node_v6", NG_V6, SK_ADDR, false, false, &p->node[1], NULL, 0},
	};
	const char *eg = NG_CHAIN_EGRESS, *in = NG_CHAIN_INGRESS;
	bool reject = p->deny == NG_DENY_REJECT;
	int rc = 0;
	struct rb rb;
	uint8_t v;

	if (render_counter(b, NG_COUNTER_METADATA) < 0 || render_counter(b, NG_COUNTER_EGRESS) < 0 ||
	    render_counter(b, NG_COUNTER_INGRESS) < 0)
		return -1;
	/* Sets and their elements before any rule binds them: a constant set
	 * takes no elements once a rule refers to it. */
	for (int i = 0; i < S_COUNT; i++)
		if (render_set(b, &sets[i]) < 0)
			return -1;
	if (render_chain(b, NG_CHAIN_REFUSE_METADATA, -1) < 0 ||
	    render_chain(b, NG_CHAIN_REFUSE_EGRESS, -1) < 0 ||
	    render_chain(b, eg, NF_INET_LOCAL_OUT) < 0 || render_chain(b, in, NF_INET_LOCAL_IN) < 0)
		return -1;

	/* Metadata is refused at once, whatever denyAction says: a connect
	 * that times out is what the seed calls "ambiguous". */
	rc |= refuse_chain(b, NG_CHAIN_REFUSE_METADATA, NG_COUNTER_METADATA, true, "cloud metadata");
	rc |= refuse_chain(b, NG_CHAIN_REFUSE_EGRESS, NG_COUNTER_EGRESS, reject, "egress not allowed");

	rc |= rule_common_head(b, eg, true);
	for (int f = 0; f < 2; f++) {
		const struct set_spec *s = &sets[S_META4 + f];

		rb_begin(&rb, b, eg);
		rb_nfproto(&rb, s->fam);
		rb_addr(&rb, s->fam, true, W0);
		rb_lookup(&rb, s);
		rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_METADATA);
		rc |= rb_end(&rb, b, f == 0 ? "cloud metadata (IPv4): always refused, before any allow rule"
					    : "cloud metadata (IPv6): always refused, before any allow rule");
	}
	rc |= rule_lookup_accept(b, eg, true, &sets[S_DNS4], "DNS to dns.servers (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_DNS6], "DNS to dns.servers (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ALLOW4], "egress.allow and pod grants (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ALLOW6], "egress.allow and pod grants (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_NAMES4], "DNS names resolved at ADD (IPv4)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_NAMES6], "DNS names resolved at ADD (IPv6)");
	rc |= rule_lookup_accept(b, eg, true, &sets[S_ND6], "IPv6 neighbour discovery, on-link only");
	rb_begin(&rb, b, eg);
	rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_EGRESS);
	rc |= rb_end(&rb, b, "default deny");

	rc |= rule_common_head(b, in, false);
	rc |= rule_lookup_accept(b, in, false, &sets[S_IN4], "ingress.ports from ingress.sources (IPv4)");
	rc |= rule_lookup_accept(b, in, false, &sets[S_IN6], "ingress.ports from ingress.sources (IPv6)");
	for (int f = 0; f < 2; f++) {
		const struct set_spec *s = &sets[S_NODE4 + f];

		rb_begin(&rb, b, in);
		rb_l4proto(&rb, IPPROTO_TCP);
		rb_nfproto(&rb, s->fam);
		rb_addr(&rb, s->fam, false, W0);
		rb_lookup(&rb, s);
		rb_verdict(&rb, NF_ACCEPT, NULL);
		rc |= rb_end(&rb, b, f == 0 ? "the node, any TCP port: kubelet probes (IPv4)"
					    : "the node, any TCP port: kubelet probes (IPv6)");
	}
	/* Neighbour discovery in: hop limit 255 proves it came from the link. */
	rb_begin(&rb, b, in);
	rb_nfproto(&rb, NG_V6);
	rb_payload(&rb, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, W0);
	v = 255;
	rb_cmp(&rb, NFT_CMP_EQ, &v, 1);
	rb_l4proto(&rb, IPPROTO_ICMPV6);
	rb_payload(&rb, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, W0);
	v = 135;
	rb_cmp(&rb, NFT_CMP_GTE, &v, 1);
	v = 136;
	rb_cmp(&rb, NFT_CMP_LTE, &v, 1);
	rb_verdict(&rb, NF_ACCEPT, NULL);
	rc |= rb_end(&rb, b, "IPv6 neighbour solicitation/advertisement from the link");
	rb_begin(&rb, b, in);
	rb_counter(&rb, NG_COUNTER_INGRESS);
	rb_verdict(&rb, NF_DROP, NULL);
	rc |= rb_end(&rb, b, "default deny");
	return rc ? -1 : 0;
}

int ng_render_replace(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	if (render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing") < 0 ||
	    render_table(b, NFT_MSG_DELTABLE, 0, NULL, "remove the previous ruleset") < 0 ||
	    render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, p->comment, "new ruleset") < 0 ||
	    render_body(p, b) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the ruleset");
	return ng_batch_finish(b, err);
}

int ng_render_delete(struct ng_batch *b, struct ng_err *err)
{
	if (render_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE, NULL, "create if missing") < 0 ||
	    render_table(b, NFT_MSG_DELTABLE, 0, NULL, "delete") < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while rendering the delete");
	return ng_batch_finish(b, err);
}
