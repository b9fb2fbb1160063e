#include "nft/render_sets.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* nft's datatype numbers (include/datatype.h), 6 bits per concat field, and
 * its byte-order tag, stored in set userdata so nft can print elements. */
#define DT_INTEGER        4
#define DT_IPADDR         7
#define DT_IP6ADDR        8
#define DT_INET_PROTO     12
#define DT_INET_SERVICE   13
#define DT_ICMP6_TYPE     29
#define DT_BITS           6
#define NFT_BYTEORDER_BIG 2

/* The element list is one netlink attribute, whose length is 16 bits: at
 * most ELEM_MAX_BYTES per element (an IPv6 concat interval element with
 * key, key end, timeout and comment is about 140), 256 of them stay well
 * under 64 KiB. */
#define ELEMS_PER_MSG  256
#define ELEM_MAX_BYTES 200

static unsigned addr_len(uint8_t fam)
{
	return (unsigned)ng_ip_len(fam);
}

/* Field byte lengths of a set's key, in order; returns the field count. */
static int key_fields(const struct ng_set_spec *s, uint8_t len[3])
{
	len[0] = (uint8_t)addr_len(s->fam);
	switch (s->kind) {
	case NG_SK_ADDR: return 1;
	case NG_SK_ADDR_PROTO_PORT:
		len[1] = 1;
		len[2] = 2;
		return 3;
	case NG_SK_ADDR_PORT: len[1] = 2; return 2;
	case NG_SK_ADDR_ICMP6: len[1] = 1; return 2;
	}
	return 1;
}

static uint32_t key_type(const struct ng_set_spec *s)
{
	uint32_t a = s->fam == NG_V4 ? DT_IPADDR : DT_IP6ADDR;

	if (s->nh_bits)
		return DT_INTEGER;

	switch (s->kind) {
	case NG_SK_ADDR: return a;
	case NG_SK_ADDR_PROTO_PORT: return ((a << DT_BITS | DT_INET_PROTO) << DT_BITS) | DT_INET_SERVICE;
	case NG_SK_ADDR_PORT: return a << DT_BITS | DT_INET_SERVICE;
	case NG_SK_ADDR_ICMP6: return a << DT_BITS | DT_ICMP6_TYPE;
	}
	return a;
}

/* Registers hold 4-byte words, so each concatenated field is padded to a
 * multiple of 4 bytes in the key. */
static uint32_t key_len(const struct ng_set_spec *s)
{
	uint8_t len[3];
	int n = key_fields(s, len);
	uint32_t total = 0;

	for (int i = 0; i < n; i++)
		total += (len[i] + 3u) & ~3u;
	return total;
}

/* Writes the start (or end) key of an element; returns its length. */
static uint32_t elem_key(const struct ng_set_spec *s, const struct ng_elem *e, bool end, uint8_t *key)
{
	uint32_t off = addr_len(s->fam);
	uint16_t port = htons(end ? e->p_hi : e->p_lo);

	memset(key, 0, 64);
	memcpy(key, end ? e->hi.a : e->lo.a, off);
	switch (s->kind) {
	case NG_SK_ADDR: break;
	case NG_SK_ADDR_PROTO_PORT:
		key[off] = e->proto;
		memcpy(key + off + 4, &port, 2);
		off += 8;
		break;
	case NG_SK_ADDR_PORT:
		memcpy(key + off, &port, 2);
		off += 4;
		break;
	case NG_SK_ADDR_ICMP6:
		key[off] = (uint8_t)(end ? e->p_hi : e->p_lo);
		off += 4;
		break;
	}
	return s->kind == NG_SK_ADDR ? addr_len(s->fam) : off;
}

int ng_set_key_decode(const struct ng_set_spec *s, const uint8_t *key, uint32_t klen, const uint8_t *end,
		      uint32_t elen, struct ng_elem *out)
{
	uint32_t alen = addr_len(s->fam);
	uint16_t lo, hi;

	if (s->kind != NG_SK_ADDR_PROTO_PORT || klen != key_len(s) || (s->interval && (!end || elen != klen)))
		return -1;
	memset(out, 0, sizeof(*out));
	out->lo.fam = out->hi.fam = s->fam;
	memcpy(out->lo.a, key, alen);
	memcpy(out->hi.a, s->interval ? end : key, alen);
	out->proto = key[alen];
	memcpy(&lo, key + alen + 4, 2);
	memcpy(&hi, (s->interval ? end : key) + alen + 4, 2);
	out->p_lo = ntohs(lo);
	out->p_hi = ntohs(hi);
	return 0;
}

static size_t spec_count(const struct ng_set_spec *s)
{
	return s->kind == NG_SK_ADDR ? s->ips->n : s->elems->n;
}

int ng_expiry_format(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	return (int)strftime(buf, len, NG_EXPIRY_PREFIX "%Y-%m-%dT%H:%M:%SZ", &tm);
}

time_t ng_expiry_parse(const char *comment)
{
	struct tm tm = {0};
	const char *end;

	if (strncmp(comment, NG_EXPIRY_PREFIX, strlen(NG_EXPIRY_PREFIX)) != 0)
		return 0;
	end = strptime(comment + strlen(NG_EXPIRY_PREFIX), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return end && *end == '\0' ? timegm(&tm) : 0;
}

/* The element's comment: "until <UTC>" with an expiry, else "name <X>"
 * when it was resolved from X (nothing otherwise). */
static int set_elem_comment(struct nftnl_set_elem *e, time_t t, const char *name)
{
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);
	char c[NFTNL_UDATA_COMMENT_MAXLEN];

	if (t)
		ng_expiry_format(t, c, sizeof(c));
	else
		snprintf(c, sizeof(c), NG_NAME_PREFIX "%.*s", NFTNL_UDATA_COMMENT_MAXLEN - 8, name);
	if (!ud || !nftnl_udata_put_strz(ud, NFTNL_UDATA_SET_ELEM_COMMENT, c)) {
		nftnl_udata_buf_free(ud);
		return -1;
	}
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);
	return 0;
}

/* The element messages of set s (elems, or s->ips for address sets): at
 * most ELEMS_PER_MSG per message. with_id: the set is created in the same
 * batch and found by its ID. */
static int elems_render(struct ng_batch *b, const struct ng_set_spec *s, const ng_elem_vec *elems, size_t n,
			uint16_t type, bool with_id)
{
	struct nlmsghdr *nlh;

	for (size_t start = 0; start < n; start += ELEMS_PER_MSG) {
		size_t end = start + ELEMS_PER_MSG < n ? start + ELEMS_PER_MSG : n;
		struct nlattr *list;

		nlh = ng_batch_msg_sized(b, 1024 + (end - start) * ELEM_MAX_BYTES, type,
					 type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0,
					 "set %s elements %zu-%zu", s->name, start + 1, end);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, b->table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, s->name);
		if (with_id)
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
			if (s->kind == NG_SK_ADDR) {
				host = (struct ng_elem){.lo = s->ips->v[i], .hi = s->ips->v[i]};
				el = &host;
			} else {
				el = &elems->v[i];
			}
			klen = elem_key(s, el, false, key);
			nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, klen);
			if (s->interval) {
				klen = elem_key(s, el, true, key);
				nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY_END, key, klen);
			}
			if (s->timeout && el->timeout && type == NFT_MSG_NEWSETELEM)
				nftnl_set_elem_set_u64(e, NFTNL_SET_ELEM_TIMEOUT,
						       (uint64_t)el->timeout * 1000);
			if (s->expires_base && (el->timeout || el->dns_name) &&
			    set_elem_comment(e, el->timeout ? s->expires_base + el->timeout : 0,
					     el->dns_name) < 0) {
				nftnl_set_elem_free(e);
				return -1;
			}
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

int ng_set_elems_render(struct ng_batch *b, const struct ng_set_spec *s, const ng_elem_vec *elems,
			uint16_t type)
{
	return elems_render(b, s, elems, elems->n, type, false);
}

/* nft's set userdata for `typeof @nh,BITS,128` (nft 1.0's src/payload.c,
 * payload_expr_build_udata): the expression kind (payload), then its
 * description, base (network header), offset and length in bits. Written
 * as nft writes it, so that `nft list` prints the typeof line and reads it
 * back. */
#define NFT_EXPR_PAYLOAD_KIND 7 /* nft's EXPR_PAYLOAD */
#define NFT_PROTO_BASE_NH     2 /* nft's PROTO_BASE_NETWORK_HDR */
enum { UD_PAYLOAD_DESC, UD_PAYLOAD_TYPE, UD_PAYLOAD_BASE, UD_PAYLOAD_OFFSET, UD_PAYLOAD_LEN };

static bool put_typeof_nh(struct nftnl_udata_buf *ud, uint32_t bits, uint32_t len)
{
	struct nftnl_udata *typeof_nest, *data;
	bool ok;

	typeof_nest = nftnl_udata_nest_start(ud, NFTNL_UDATA_SET_KEY_TYPEOF);
	ok = typeof_nest && nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_TYPEOF_EXPR, NFT_EXPR_PAYLOAD_KIND);
	data = ok ? nftnl_udata_nest_start(ud, NFTNL_UDATA_SET_TYPEOF_DATA) : NULL;
	ok = data && nftnl_udata_put_u32(ud, UD_PAYLOAD_DESC, 0) &&
	     nftnl_udata_put_u32(ud, UD_PAYLOAD_TYPE, 0) &&
	     nftnl_udata_put_u32(ud, UD_PAYLOAD_BASE, NFT_PROTO_BASE_NH) &&
	     nftnl_udata_put_u32(ud, UD_PAYLOAD_OFFSET, bits) && nftnl_udata_put_u32(ud, UD_PAYLOAD_LEN, len);
	if (!ok)
		return false;
	nftnl_udata_nest_end(ud, data);
	nftnl_udata_nest_end(ud, typeof_nest);
	return true;
}

int ng_set_render(struct ng_batch *b, struct ng_set_spec *s)
{
	struct nftnl_set *set = nftnl_set_alloc();
	struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(128);
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
	/* Every set but the _ttl name sets is constant: after this transaction
	 * its elements change only by replacing the whole table. The kernel
	 * refuses constant sets with timeouts, hence the pinned/_ttl pair. */
	if (!s->timeout)
		flags |= NFT_SET_CONSTANT;
	if (s->interval)
		flags |= NFT_SET_INTERVAL | NFT_SET_CONCAT;
	if (s->timeout)
		flags |= NFT_SET_TIMEOUT;

	nftnl_set_set_str(set, NFTNL_SET_TABLE, b->table);
	nftnl_set_set_str(set, NFTNL_SET_NAME, s->name);
	nftnl_set_set_u32(set, NFTNL_SET_FAMILY, b->family);
	nftnl_set_set_u32(set, NFTNL_SET_ID, s->id);
	nftnl_set_set_u32(set, NFTNL_SET_FLAGS, flags);
	nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, key_type(s));
	nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, key_len(s));
	if (s->interval)
		nftnl_set_set_data(set, NFTNL_SET_DESC_CONCAT, fields, (uint32_t)nfields);
	if ((flags & NFT_SET_CONSTANT) && n > 0 && !s->from_dns)
		nftnl_set_set_u32(set, NFTNL_SET_DESC_SIZE, (uint32_t)n);
	nftnl_udata_put_u32(ud, NFTNL_UDATA_SET_KEYBYTEORDER, s->kind == NG_SK_ADDR ? NFT_BYTEORDER_BIG : 0);
	if (s->nh_bits && !put_typeof_nh(ud, s->nh_bits, 8 * key_len(s))) {
		nftnl_set_free(set);
		nftnl_udata_buf_free(ud);
		return -1;
	}
	nftnl_set_set_data(set, NFTNL_SET_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
	nftnl_udata_buf_free(ud);

	nlh = ng_batch_msg(b, NFT_MSG_NEWSET, NLM_F_CREATE, "set %s", s->name);
	nftnl_set_nlmsg_build_payload(nlh, set);
	ng_batch_commit_msg(b);
	nftnl_set_free(set);

	return elems_render(b, s, s->kind == NG_SK_ADDR ? NULL : s->elems, n, NFT_MSG_NEWSETELEM, true);
}
