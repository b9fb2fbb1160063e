/* The packet-socket guard (netdev) as rendered, rule by rule, and the
 * exact encoding of set elements. */
#include "render_fixtures.h"

#include "nft/render_mld.h"

static void test_raw_guard(void **state)
{
	(void)state;
	struct chain_rules eg = {.chain = NG_RAW_CHAIN_EGRESS, .family = NFPROTO_NETDEV},
			   v4 = {.chain = NG_RAW_CHAIN_V4, .family = NFPROTO_NETDEV},
			   v6 = {.chain = NG_RAW_CHAIN_V6, .family = NFPROTO_NETDEV},
			   mld1 = {.chain = NG_MLD_CHAIN "_1", .family = NFPROTO_NETDEV};
	static const char *const want_eg[] = {"ARP request or reply from the pod's 10.244.1.5", "IPv4",
					      "IPv6", "default deny"};
	static const char *const want_v4[] = {"IPv4 options (source routes among them)",
					      "only from the pod's own addresses",
					      "cloud metadata",
					      "DNS",
					      "egress.allow",
					      "DNS names",
					      "replies from ingress.ports",
					      "TCP to the node",
					      "default deny"};
	struct ng_snapshot raw = {.table = NG_TABLE, .family = NFPROTO_NETDEV};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct msgs m = {0};

	render_chain(NG_DENY_REJECT, &eg);
	render_chain(NG_DENY_REJECT, &v4);
	render_chain(NG_DENY_REJECT, &v6);
	render_chain(NG_DENY_REJECT, &mld1);
	assert_int_equal(eg.n, 4);
	for (int i = 0; i < 4; i++)
		assert_contains(eg.comments[i], want_eg[i]);
	/* ARP: Ethernet/IPv4 sizes, operation 1-2, sender = the pod, < 64 bytes. */
	assert_contains(eg.exprs[0],
			"[ payload load 6b @ network header + 0 => reg 1 ] [ cmp eq reg 1 0x00080100 "
			"0x00000406 ]");
	assert_contains(eg.exprs[0], "[ cmp gte reg 1 0x00000100 ] [ cmp lte reg 1 0x00000200 ]");
	assert_contains(eg.exprs[0],
			"[ payload load 4b @ network header + 14 => reg 1 ] [ cmp eq reg 1 0x0501f40a ]");
	assert_contains(eg.exprs[0], "[ meta load len => reg 1 ] [ bitwise reg 1 = ( reg 1 & 0xffffffc0 ) ^ "
				     "0x00000000 ] [ cmp eq reg 1 0x00000000 ]");
	/* ether type at link-layer offset 12, and meta protocol, both 0x0800. */
	assert_contains(eg.exprs[1],
			"[ payload load 2b @ link header + 12 => reg 1 ] [ cmp eq reg 1 0x00000008 ]");
	assert_contains(eg.exprs[1], "[ meta load protocol => reg 1 ] [ cmp eq reg 1 0x00000008 ]");
	assert_contains(eg.exprs[1], "jump -> raw_v4");
	assert_contains(eg.exprs[2], "0x0000dd86");
	assert_int_equal(v4.n, 9);
	for (int i = 0; i < 9; i++)
		assert_contains(v4.comments[i], want_v4[i]);
	/* Source routes first (issue 13), then the pod's own sources, then
	 * metadata: daddr in the metadata set jumps to the refusal. */
	assert_contains(v4.exprs[0], "[ payload load 1b @ network header + 0 => reg 1 ] [ bitwise reg 1 = ( "
				     "reg 1 & 0x0000000f ) ^ 0x00000000 ] [ cmp neq reg 1 0x00000005 ] [ "
				     "immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.exprs[0], "[ exthdr load ipv6 1b @ 43 + 0 present => reg 1 ]");
	assert_contains(v4.exprs[2], "[ payload load 4b @ network header + 16 => reg 1 ] [ lookup reg 1 set "
				     "metadata_v4 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.exprs[4],
			"[ lookup reg 1 set metadata_v6 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	/* The IPv6 forms with free bits, in the guard too. */
	for (int i = 5; i < 5 + NG_V6_FORMS; i++)
		assert_contains(v6.exprs[i],
				"set metadata_v6_embedded 0x0 ] [ immediate reg 0 jump -> refuse_raw ]");
	for (int i = 3; i < v4.n; i++)
		assert_true(strstr(v4.exprs[i], "metadata") == NULL);
	/* Replies: tcp flags & (syn|ack) != syn, then daddr . sport. */
	assert_contains(v4.exprs[6],
			"[ payload load 1b @ transport header + 13 => reg 1 ] [ bitwise reg 1 = ( reg 1 "
			"& 0x00000012 ) ^ 0x00000000 ] [ cmp neq reg 1 0x00000002 ]");
	assert_contains(v4.exprs[6], "[ payload load 2b @ transport header + 0 => reg 9 ]");
	assert_contains(v4.exprs[7], "[ cmp neq reg 1 0x00000002 ]");
	/* The pod's own sources in each family chain, and :: only for ND and
	 * the MLD chains. */
	assert_contains(v4.exprs[1],
			"[ lookup reg 1 set source_v4 0x1 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_contains(v6.comments[1], "neighbour discovery from ::");
	assert_contains(v6.comments[2], "MLDv2 report from ::");
	assert_contains(v6.exprs[3],
			"[ lookup reg 1 set source_v6 0x1 ] [ immediate reg 0 jump -> refuse_raw ]");
	assert_int_equal(v6.n, 11 + 1 + NG_V6_FORMS + 1);
	assert_contains(v6.comments[9 + 1 + NG_V6_FORMS], "neighbour discovery");
	assert_contains(v6.exprs[10 + 1 + NG_V6_FORMS], "[ immediate reg 0 jump -> mld_report ]");
	/* MLD in the guard: meta len counts the Ethernet header (14 + 76). */
	assert_int_equal(mld1.n, 1);
	assert_contains(mld1.exprs[0], "[ meta load len => reg 1 ] [ cmp eq reg 1 0x0000005a ]");

	/* The base chain: netdev egress hook on CNI_IFNAME, policy drop. */
	sample_policy(&p, NG_DENY_REJECT);
	snprintf(p.ifname, sizeof(p.ifname), "net1");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &b, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	bool base = false;
	for (size_t i = 0; i < raw.lines.n; i++)
		base |= strcmp(raw.lines.v[i],
			       "chain egress hook 1 priority 0 policy 0 type filter device net1 "
			       "flags 0x0") == 0;
	assert_true(base);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);

	/* Off: the create form has no netdev message at all; the replace
	 * form removes a guard left from before. */
	p.raw_guard = false;
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	for (int i = 0; i < m.n; i++)
		assert_int_not_equal(m.family[i], NFPROTO_NETDEV);
	ng_batch_free(&b);
	memset(&m, 0, sizeof(m));
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, collect, &m), 0);
	int netdev = 0;
	for (int i = 0; i < m.n; i++)
		netdev += m.family[i] == NFPROTO_NETDEV;
	assert_int_equal(netdev, 2); /* create if missing, delete */
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	assert_int_equal(raw.lines.n, 0);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

struct elems {
	const char *set;
	char keys[16][200];
	int n;
	uint32_t flags;
	uint64_t timeout[16];
	char comment[16][64];
};

static int hex(char *out, const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	return (int)(2 * len);
}

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct elems *e = data;
	struct nftnl_set *s;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *el;

	if (fam_of(nlh) != NFPROTO_INET)
		return 0; /* the netdev guard's copies: test_raw_guard */
	if (nlh->nlmsg_type == nft(NFT_MSG_NEWSET)) {
		s = nftnl_set_alloc();
		assert_int_equal(nftnl_set_nlmsg_parse(nlh, s), 0);
		if (!strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), e->set))
			e->flags = nftnl_set_get_u32(s, NFTNL_SET_FLAGS);
		nftnl_set_free(s);
		return 0;
	}
	if (nlh->nlmsg_type != nft(NFT_MSG_NEWSETELEM))
		return 0;
	s = nftnl_set_alloc();
	assert_int_equal(nftnl_set_elems_nlmsg_parse(nlh, s), 0);
	if (strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), e->set)) {
		nftnl_set_free(s);
		return 0;
	}
	it = nftnl_set_elems_iter_create(s);
	while ((el = nftnl_set_elems_iter_next(it)) && e->n < 16) {
		uint32_t kl = 0, el_len = 0;
		const uint8_t *k = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY, &kl);
		const uint8_t *ke = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY_END, &el_len);
		int o = hex(e->keys[e->n], k, kl);

		if (ke) {
			strcpy(e->keys[e->n] + o, "-");
			hex(e->keys[e->n] + o + 1, ke, el_len);
		}
		if (nftnl_set_elem_is_set(el, NFTNL_SET_ELEM_TIMEOUT))
			e->timeout[e->n] = nftnl_set_elem_get_u64(el, NFTNL_SET_ELEM_TIMEOUT);
		uint32_t ul = 0;
		const uint8_t *ud = nftnl_set_elem_get(el, NFTNL_SET_ELEM_USERDATA, &ul);
		if (ud && ul > 2 && ud[0] == 0) /* comment TLV: type 0, length, text */
			snprintf(e->comment[e->n], 64, "%s", (const char *)ud + 2);
		e->n++;
	}
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return 0;
}

static struct elems set_elems(const char *set)
{
	struct elems e = {.set = set};
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, NG_DENY_REJECT);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, elems_cb, &e), 0);
	ng_batch_free(&b);
	ng_policy_free(&p);
	return e;
}

static void test_set_encoding(void **state)
{
	(void)state;
	struct elems e;

	/* addr . proto . port, each field padded to 4 bytes, port big endian. */
	e = set_elems("allow_v4");
	assert_int_equal(e.n, 1);
	assert_string_equal(e.keys[0], "0a1400000600000001bb0000-0a14ffff0600000001bb0000");
	assert_int_equal(e.flags, NFT_SET_CONSTANT | NFT_SET_INTERVAL | NFT_SET_CONCAT);
	e = set_elems("allow_v6");
	assert_string_equal(e.keys[0], "fd000020000000000000000000000000110000001388000"
				       "0-fd00002000000000ffffffffffffffff1100000013920000");
	/* Names: the pinned set is constant and says when each address
	 * expires; its _ttl twin carries the timeout, in milliseconds. */
	e = set_elems("names_v4");
	assert_int_equal(e.timeout[0], 0);
	assert_int_equal(e.flags, NFT_SET_CONSTANT | NFT_SET_INTERVAL | NFT_SET_CONCAT);
	assert_string_equal(e.comment[0], "until 2026-11-30T01:53:20Z"); /* names_at + 3600 s */
	e = set_elems("names_v4_ttl");
	assert_int_equal(e.timeout[0], 3600000);
	assert_int_equal(e.flags, NFT_SET_INTERVAL | NFT_SET_CONCAT | NFT_SET_TIMEOUT);
	/* Plain address sets: a key only, constant hash. */
	e = set_elems("metadata_v4");
	assert_string_equal(e.keys[0], "a9fea9fe");
	assert_int_equal(e.flags, NFT_SET_CONSTANT);
	/* ICMPv6 type as a 1-byte field padded to 4. */
	e = set_elems("nd_v6");
	assert_string_equal(e.keys[0], "fe80000000000000000000000000000087000000-"
				       "febfffffffffffffffffffffffffffff88000000");
	/* addr . port for ingress. */
	e = set_elems("ingress_v4");
	assert_string_equal(e.keys[0], "0af400001f900000-0af4ffff1f900000");
	/* DNS: exact concatenation, no interval. */
	e = set_elems("dns_v4");
	assert_int_equal(e.n, 2);
	assert_string_equal(e.keys[0], "0a60000a1100000000350000");
	assert_int_equal(e.flags, NFT_SET_CONSTANT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_guard),
		cmocka_unit_test(test_set_encoding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
