/* kernel/ctlookup.c against the fake socket: a keep-alive lookup asks the
 * kernel for a filtered dump (CTA_FILTER on the original destination
 * address and protocol, the values in CTA_TUPLE_ORIG, the family of the
 * address), checks every entry itself all the same (a kernel without the
 * filter sends everything), skips flows that are over (TCP TIME_WAIT),
 * stops at what the caller wants or at the entry budget, and then leaves
 * the rest of the dump unread. */
#include "fake_kernel.h"

#include <arpa/inet.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "kernel/ctlookup.h"

struct flow {
	const char *dst;
	uint8_t proto;
	uint16_t dport;
	uint8_t tcp_state; /* 0: none said */
};

struct world {
	struct flow f[300];
	int n;
	struct fsock sock;
	struct ng_nl nl;
	uint16_t ports[300];
	int nports, want; /* the callback says "enough" after `want` ports (0: never) */
};

static void put_flow(struct fsock *s, uint32_t seq, const struct flow *f)
{
	struct nlmsghdr *nlh = fs_msg(s, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW, NLM_F_MULTI, seq);
	struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *t, *n;
	uint8_t a[4];

	g->nfgen_family = AF_INET;
	inet_pton(AF_INET, f->dst, a);
	t = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, CTA_IP_V4_DST, 4, a);
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, f->proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(f->dport));
	mnl_attr_nest_end(nlh, n);
	mnl_attr_nest_end(nlh, t);
	if (f->tcp_state) {
		t = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
		n = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
		mnl_attr_put_u8(nlh, CTA_PROTOINFO_TCP_STATE, f->tcp_state);
		mnl_attr_nest_end(nlh, n);
		mnl_attr_nest_end(nlh, t);
	}
	fs_end(s, nlh);
}

/* The kernel without the filter: every entry, 20 a datagram. */
static void answer(struct fsock *s, const struct nlmsghdr *req)
{
	struct world *w = s->world;

	for (int i = 0; i < w->n; i++) {
		if (i % 20 == 0)
			fs_dgram(s, 0);
		put_flow(s, req->nlmsg_seq, &w->f[i]);
	}
	fs_dgram(s, 0);
	fs_done(s, req->nlmsg_seq, 0);
}

static bool on_port(uint16_t dport, void *data)
{
	struct world *w = data;

	w->ports[w->nports++] = dport;
	return !w->want || w->nports < w->want;
}

static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->sock.answer = answer;
	w->sock.world = w;
	ng_nl_init_ops(&w->nl, &fs_ops, &w->sock);
	return w;
}

static void ip4(struct ng_ip *ip, const char *s)
{
	*ip = (struct ng_ip){.fam = NG_V4};
	inet_pton(AF_INET, s, ip->a);
}

/* The attribute `type` of the nest at `a` (NULL: not there). */
static const struct nlattr *child(const struct nlattr *a, uint16_t type)
{
	const struct nlattr *c;

	mnl_attr_for_each_nested(c, a) {
		if (mnl_attr_get_type(c) == type)
			return c;
	}
	return NULL;
}

static void test_request_is_filtered(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	struct ng_ip dst;
	const struct nlmsghdr *req;
	const struct nlattr *a, *tuple = NULL, *filter = NULL, *x;
	bool cut = true;

	ip4(&dst, "10.21.0.7");
	assert_int_equal(ng_ct_flows_to(&w->nl, &dst, 6, 256, on_port, w, &cut, &err), 0);
	assert_false(cut);
	req = fs_req(&w->sock, 0);
	assert_int_equal(req->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET);
	assert_true(req->nlmsg_flags & NLM_F_DUMP);
	assert_int_equal(((const struct nfgenmsg *)mnl_nlmsg_get_payload(req))->nfgen_family, AF_INET);
	mnl_attr_for_each(a, req, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) == CTA_TUPLE_ORIG)
			tuple = a;
		else if (mnl_attr_get_type(a) == CTA_FILTER)
			filter = a;
	}
	assert_non_null(tuple);
	assert_non_null(filter);
	/* Destination address and protocol, exactly. */
	assert_non_null(x = child(filter, CTA_FILTER_ORIG_FLAGS));
	assert_int_equal(mnl_attr_get_u32(x), (1U << 1) | (1U << 3));
	assert_non_null(x = child(child(tuple, CTA_TUPLE_IP), CTA_IP_V4_DST));
	assert_memory_equal(mnl_attr_get_payload(x), dst.a, 4);
	assert_non_null(x = child(child(tuple, CTA_TUPLE_PROTO), CTA_PROTO_NUM));
	assert_int_equal(mnl_attr_get_u8(x), 6);
	free(w);
}

static void test_entries_checked_and_bounded(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	struct ng_ip dst;
	bool cut = false;
	int rc;

	/* A kernel that did not filter: flows elsewhere, of another protocol,
	 * and over, around two live ones. */
	w->f[w->n++] = (struct flow){"127.1.0.1", 17, 9, 0};
	w->f[w->n++] = (struct flow){"10.21.0.7", 17, 443, 0};
	w->f[w->n++] = (struct flow){"10.21.0.7", 6, 443, TCP_CONNTRACK_TIME_WAIT};
	w->f[w->n++] = (struct flow){"10.21.0.7", 6, 443, TCP_CONNTRACK_ESTABLISHED};
	w->f[w->n++] = (struct flow){"10.21.0.8", 6, 443, TCP_CONNTRACK_ESTABLISHED};
	w->f[w->n++] = (struct flow){"10.21.0.7", 6, 8443, TCP_CONNTRACK_SYN_SENT};
	ip4(&dst, "10.21.0.7");
	rc = ng_ct_flows_to(&w->nl, &dst, 6, 256, on_port, w, &cut, &err);
	assert_int_equal(rc, 6);
	assert_false(cut);
	assert_int_equal(w->nports, 2);
	assert_int_equal(w->ports[0], 443);
	assert_int_equal(w->ports[1], 8443);
	assert_int_equal(w->sock.qhead, w->sock.qtail);

	/* Enough after the first: the rest is never read. */
	w->nports = 0;
	w->want = 1;
	rc = ng_ct_flows_to(&w->nl, &dst, 6, 256, on_port, w, &cut, &err);
	assert_true(cut);
	assert_int_equal(w->nports, 1);
	assert_true(w->nl.dump_left);
	free(w);

	/* 250 flows to other addresses first: the budget ends the read. */
	w = world_new();
	for (int i = 0; i < 250; i++)
		w->f[w->n++] = (struct flow){"127.2.0.1", 6, (uint16_t)(1000 + i), TCP_CONNTRACK_SYN_SENT};
	w->f[w->n++] = (struct flow){"10.21.0.7", 6, 443, TCP_CONNTRACK_ESTABLISHED};
	rc = ng_ct_flows_to(&w->nl, &dst, 6, 100, on_port, w, &cut, &err);
	assert_int_equal(rc, 100);
	assert_true(cut);
	assert_int_equal(w->nports, 0);
	assert_true(w->sock.qhead != w->sock.qtail); /* left in the kernel */
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_is_filtered),
		cmocka_unit_test(test_entries_checked_and_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
