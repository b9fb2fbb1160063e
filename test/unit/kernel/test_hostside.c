/* kernel/hostside.c against a fake nf_tables on the fake socket: the scan
 * reads every ngh.* netdev table's attachment (from its name) and device,
 * index and network (from its comment, or from its base chain when an
 * older version wrote no device there); ADD's transaction creates its own
 * table and reads and removes nothing else; GC removes what its network no
 * longer lists and whatever is gone. A table is gone when no device of its
 * name and index is in this namespace: the tests' live device is "lo". */
#include "fake_kernel.h"

#include <libnftnl/chain.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <net/if.h>

#include "kernel/hostside.h"

#define NFT(t) ((NFNL_SUBSYS_NFTABLES << 8) | (t))

struct ftable {
	const char *name;
	const char *dev;       /* in the comment; NULL: an old comment without it */
	int ifindex;           /* in the comment */
	const char *network;   /* in the comment */
	const char *chain_dev; /* its base chain's device, NULL: none */
};

struct world {
	struct ftable t[12];
	int n;
	int table_dumps, chain_dumps, batches;
	char deleted[16][256]; /* DELTABLE names, in order */
	int ndeleted;
	char created[256]; /* the last NEWTABLE with NLM_F_EXCL */
	struct fsock sock;
	struct ng_nl nl;
};

static void put_table(struct fsock *s, uint32_t seq, const struct ftable *ft)
{
	struct nlmsghdr *nlh = fs_msg(s, 0, 0, 0);
	struct nftnl_table *t = nftnl_table_alloc();
	struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(256);
	char comment[200];

	nlh = nftnl_nlmsg_build_hdr((char *)nlh, NFT_MSG_NEWTABLE, NFPROTO_NETDEV, NLM_F_MULTI, seq);
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, ft->name);
	if (ft->dev)
		snprintf(comment, sizeof(comment),
			 "boxxkite-netguard 0.3 host: ifindex %d dev %s network %s pod sandboxes/a",
			 ft->ifindex, ft->dev, ft->network);
	else
		snprintf(comment, sizeof(comment), "boxxkite-netguard 0.2 host: pod sandboxes/a");
	nftnl_udata_put_strz(u, NFTNL_UDATA_TABLE_COMMENT, comment);
	nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(u), nftnl_udata_buf_len(u));
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_udata_buf_free(u);
	nftnl_table_free(t);
	fs_end(s, nlh);
}

static void put_chain(struct fsock *s, uint32_t seq, const struct ftable *ft)
{
	struct nlmsghdr *nlh = fs_msg(s, 0, 0, 0);
	struct nftnl_chain *c = nftnl_chain_alloc();

	nlh = nftnl_nlmsg_build_hdr((char *)nlh, NFT_MSG_NEWCHAIN, NFPROTO_NETDEV, NLM_F_MULTI, seq);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, ft->name);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, "from_pod");
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, NF_NETDEV_INGRESS);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
	nftnl_chain_set_str(c, NFTNL_CHAIN_DEV, ft->chain_dev);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	nftnl_chain_free(c);
	fs_end(s, nlh);
}

static void table_name(const struct nlmsghdr *req, char *out, size_t len)
{
	struct nftnl_table *t = nftnl_table_alloc();

	out[0] = '\0';
	if (nftnl_table_nlmsg_parse(req, t) == 0 && nftnl_table_get_str(t, NFTNL_TABLE_NAME))
		snprintf(out, len, "%s", nftnl_table_get_str(t, NFTNL_TABLE_NAME));
	nftnl_table_free(t);
}

static void answer(struct fsock *s, const struct nlmsghdr *req)
{
	struct world *w = s->world;

	switch (req->nlmsg_type) {
	case NFT(NFT_MSG_GETTABLE):
		w->table_dumps++;
		fs_dgram(s, 0);
		for (int i = 0; i < w->n; i++)
			put_table(s, req->nlmsg_seq, &w->t[i]);
		fs_done(s, req->nlmsg_seq, 0);
		break;
	case NFT(NFT_MSG_GETCHAIN):
		w->chain_dumps++;
		fs_dgram(s, 0);
		for (int i = 0; i < w->n; i++)
			if (w->t[i].chain_dev)
				put_chain(s, req->nlmsg_seq, &w->t[i]);
		fs_done(s, req->nlmsg_seq, 0);
		break;
	case NFT(NFT_MSG_GETGEN): /* the marker after a batch */
		fs_dgram(s, 0);
		fs_end(s, fs_msg(s, NFT(NFT_MSG_NEWGEN), 0, req->nlmsg_seq));
		fs_ack(s, req->nlmsg_seq, 0);
		break;
	case NFNL_MSG_BATCH_BEGIN: w->batches++; break;
	case NFT(NFT_MSG_DELTABLE):
		assert_true(w->ndeleted < 16);
		table_name(req, w->deleted[w->ndeleted++], sizeof(w->deleted[0]));
		break;
	case NFT(NFT_MSG_NEWTABLE):
		if (req->nlmsg_flags & NLM_F_EXCL)
			table_name(req, w->created, sizeof(w->created));
		break;
	default: break; /* the body of a transaction: applied, no answer */
	}
}

static void add(struct world *w, struct ftable t)
{
	assert_true(w->n < 12);
	w->t[w->n++] = t;
}

static int lo_index(void)
{
	int i = (int)if_nametoindex("lo");

	assert_true(i > 0);
	return i;
}

/* A node with: cid1 (network kind, on lo: live), cid2 (on lo, but made for
 * another index: gone), cid3 (an old comment; its chain on a device that
 * is not here: gone), cid4 (an old comment; its chain on lo: live, network
 * unknown), cid8 (network flannel, live); and two tables not ours. */
static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));
	int lo = lo_index();

	assert_non_null(w);
	add(w, (struct ftable){"ngh.cid1.eth0", "lo", lo, "kind", "lo"});
	add(w, (struct ftable){"ngh.cid2.eth0", "lo", lo + 1000, "kind", "lo"});
	add(w, (struct ftable){"ngh.cid3.eth0", NULL, 0, NULL, "ng-nosuchdev0"});
	add(w, (struct ftable){"ngh.cid4.net1", NULL, 0, NULL, "lo"});
	add(w, (struct ftable){"ngh.cid8.eth0", "lo", lo, "flannel", "lo"});
	add(w, (struct ftable){"boxxkite_netguard", "lo", lo, "kind", "lo"});
	add(w, (struct ftable){"ngh.not.a.table", "lo", lo, "kind", "lo"});
	w->sock.answer = answer;
	w->sock.world = w;
	ng_nl_init_ops(&w->nl, &fs_ops, &w->sock);
	return w;
}

static const struct ng_host_table *find(const ng_host_tables *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i].name, name) == 0)
			return &v->v[i];
	return NULL;
}

static bool deleted(const struct world *w, const char *name)
{
	for (int i = 0; i < w->ndeleted; i++)
		if (strcmp(w->deleted[i], name) == 0)
			return true;
	return false;
}

static void test_scan(void **state)
{
	(void)state;
	struct world *w = world_new();
	ng_host_tables v = {0};
	struct ng_err err = {0};
	const struct ng_host_table *h;

	assert_int_equal(ng_host_scan(&w->nl, &v, &err), 0);
	assert_int_equal(v.n, 5); /* the two tables not ours are not listed */
	h = find(&v, "ngh.cid1.eth0");
	assert_non_null(h);
	assert_string_equal(h->container_id, "cid1");
	assert_string_equal(h->ifname, "eth0");
	assert_string_equal(h->network, "kind");
	assert_string_equal(h->device, "lo");
	assert_int_equal(h->ifindex, lo_index());
	assert_false(h->gone);
	assert_true(find(&v, "ngh.cid2.eth0")->gone); /* another device of that name now */
	/* The old comments: the device from the base chain. */
	h = find(&v, "ngh.cid3.eth0");
	assert_string_equal(h->device, "ng-nosuchdev0");
	assert_string_equal(h->network, "");
	assert_true(h->gone);
	h = find(&v, "ngh.cid4.net1");
	assert_string_equal(h->ifname, "net1");
	assert_string_equal(h->device, "lo");
	assert_false(h->gone);
	assert_int_equal(w->chain_dumps, 1);
	ng_vec_free(&v);
	free(w);

	/* Every comment says its device: no chain dump. */
	w = world_new();
	w->n = 2;
	assert_int_equal(ng_host_scan(&w->nl, &v, &err), 0);
	assert_int_equal(v.n, 2);
	assert_int_equal(w->chain_dumps, 0);
	ng_vec_free(&v);
	free(w);
}

static void host_policy(struct ng_policy *p, const char *dev)
{
	static const uint8_t mac[6] = {0x02, 0x42, 0x0a, 0xf4, 0x01, 0x05};
	struct ng_ip ip;

	memset(p, 0, sizeof(*p));
	assert_int_equal(ng_ip_parse("169.254.169.254", &ip), 0);
	ng_vec_push(&p->metadata[0], &ip);
	assert_int_equal(ng_ip_parse("10.244.1.5", &ip), 0);
	ng_vec_push(&p->pod4, &ip);
	ng_vec_push(&p->source[0], &ip);
	p->raw_guard = true;
	snprintf(p->ifname, sizeof(p->ifname), "eth0");
	p->host = true;
	snprintf(p->host_dev, sizeof(p->host_dev), "%s", dev);
	p->host_ifindex = 42;
	memcpy(p->mac, mac, 6);
	snprintf(p->host_comment, sizeof(p->host_comment),
		 "boxxkite-netguard 0.3 host: ifindex 42 dev %s network kind pod sandboxes/new", dev);
}

static void test_apply_reads_nothing_else(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_policy p;
	struct ng_err err = {0};

	/* A new attachment on vethnew, beside the node's other tables (an
	 * older attachment's on vethnew among them): one transaction, its own
	 * table created, nothing listed, nothing else removed. An ADD costs
	 * the same beside 200 pods as beside none; stale tables are GC's. */
	add(w, (struct ftable){"ngh.cid5.eth0", "vethnew", 41, "kind", "vethnew"});
	host_policy(&p, "vethnew");
	assert_int_equal(ng_host_apply(&w->nl, &p, "ngh.cidnew.eth0", &err), 0);
	assert_int_equal(w->batches, 1);
	assert_int_equal(w->table_dumps, 0);
	assert_int_equal(w->chain_dumps, 0);
	assert_string_equal(w->created, "ngh.cidnew.eth0");
	assert_int_equal(w->ndeleted, 0);
	ng_policy_free(&p);
	free(w);
}

static void test_gc(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err = {0};
	const struct ng_attachment valid[] = {{"cid1", "eth0"}, {"cid2", "eth0"}};
	size_t removed = 0;

	add(w, (struct ftable){"ngh.cid7.eth0", "lo", lo_index(), "kind", "lo"});
	/* Network kind lists cid1 and cid2: cid7 (live, unlisted) goes; cid2
	 * (listed, but gone) and cid3 (gone) go; cid8 is another network's and
	 * live, cid4's network is unknown and it is live: both stay. */
	assert_int_equal(ng_host_gc(&w->nl, "kind", valid, 2, &removed, &err), 0);
	assert_int_equal(removed, 3);
	assert_int_equal(w->ndeleted, 3);
	assert_true(deleted(w, "ngh.cid7.eth0"));
	assert_true(deleted(w, "ngh.cid2.eth0"));
	assert_true(deleted(w, "ngh.cid3.eth0"));
	assert_int_equal(w->batches, 1);
	free(w);

	/* Nothing to remove: no transaction at all. */
	w = world_new();
	w->n = 1;
	assert_int_equal(ng_host_gc(&w->nl, "kind", valid, 1, &removed, &err), 0);
	assert_int_equal(removed, 0);
	assert_int_equal(w->batches, 0);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_apply_reads_nothing_else),
		cmocka_unit_test(test_gc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
