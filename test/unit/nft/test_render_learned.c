/* A rebuilt table carries what the agent learned: the elements of
 * policy.learned go into the learned sets of every table that has them
 * (the pod's inet table and guard; the host side gets learned_node), in the same batch as
 * the tables, each with the time it has left; none when it is empty (ADD,
 * CHECK). */
#include "render_fixtures.h"

#include "nft/render_host.h"

struct seen {
	/* [inet, netdev][names_v4, names_v4_ranges]: elements, their timeouts (ms) */
	int n[2][2];
	uint64_t timeout[2][2];
	char table[2][64];
};

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct seen *s = data;
	struct nftnl_set *set;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	const char *name;
	int fam, which;

	if (nlh->nlmsg_type != nft(NFT_MSG_NEWSETELEM))
		return 0;
	set = nftnl_set_alloc();
	assert_non_null(set);
	assert_true(nftnl_set_elems_nlmsg_parse(nlh, set) >= 0);
	name = nftnl_set_get_str(set, NFTNL_SET_NAME);
	fam = fam_of(nlh) == NFPROTO_NETDEV ? 1 : 0;
	which = !strcmp(name, NG_SET_NAMES_V4) ? 0 : !strcmp(name, NG_SET_NAMES_V4 NG_RANGES_SUFFIX) ? 1 : -1;
	if (which >= 0) {
		snprintf(s->table[fam], sizeof(s->table[fam]), "%s", nftnl_set_get_str(set, NFTNL_SET_TABLE));
		it = nftnl_set_elems_iter_create(set);
		while ((e = nftnl_set_elems_iter_next(it))) {
			s->n[fam][which]++;
			s->timeout[fam][which] = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
		}
		nftnl_set_elems_iter_destroy(it);
	}
	nftnl_set_free(set);
	return 0;
}

static void learn_policy(struct ng_policy *p)
{
	sample_policy(p, NG_DENY_REJECT);
	ng_vec_free(&p->names[0]); /* learn mode: nothing resolved at ADD */
	p->learn = true;
	p->host = true;
	snprintf(p->host_dev, sizeof(p->host_dev), "veth0");
	p->host_ifindex = 7;
	snprintf(p->host_comment, sizeof(p->host_comment), "test pod, host side");
	add_elem(&p->learned[0][0], "10.50.0.7", "10.50.0.7", 6, 443, 443, 42);
	add_elem(&p->learned[1][0], "10.50.0.8", "10.50.0.8", 6, 8000, 8100, 17);
	/* the node side learned the same addresses from what it saw, later */
	add_elem(&p->learned_node[0][0], "10.50.0.7", "10.50.0.7", 6, 443, 443, 43);
	add_elem(&p->learned_node[1][0], "10.50.0.8", "10.50.0.8", 6, 8000, 8100, 18);
}

/* The pod side's replace of `p`: what its learned sets are given. */
static void render_pod(const struct ng_policy *p, struct seen *s)
{
	struct ng_batch b;
	struct ng_err err = {0};

	memset(s, 0, sizeof(*s));
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, elems_cb, s), 0);
	ng_batch_free(&b);
}

static void test_pod_side(void **state)
{
	struct ng_policy p;
	struct seen s;

	(void)state;
	learn_policy(&p);
	render_pod(&p, &s);
	for (int fam = 0; fam < 2; fam++) { /* the inet table and the guard */
		assert_string_equal(s.table[fam], NG_TABLE);
		assert_int_equal(s.n[fam][0], 1);
		assert_int_equal(s.n[fam][1], 1);
		assert_int_equal(s.timeout[fam][0], 42000);
		assert_int_equal(s.timeout[fam][1], 17000);
	}
	/* ADD and CHECK: nothing learned, nothing rendered into those sets */
	for (int r = 0; r < 2; r++)
		ng_vec_free(&p.learned[r][0]);
	render_pod(&p, &s);
	assert_int_equal(s.n[0][0] + s.n[0][1] + s.n[1][0] + s.n[1][1], 0);
	ng_policy_free(&p);
}

static void test_host_side(void **state)
{
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct seen s = {0};

	(void)state;
	learn_policy(&p);
	assert_int_equal(ng_batch_init(&b, "ngh.cid.eth0", 1, &err), 0);
	assert_int_equal(ng_render_host(&p, true, NULL, 0, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, elems_cb, &s), 0);
	assert_string_equal(s.table[1], "ngh.cid.eth0");
	assert_int_equal(s.n[1][0], 1);
	assert_int_equal(s.n[1][1], 1);
	/* the node side's own (pol.learned_node), not the pod's */
	assert_int_equal(s.timeout[1][0], 43000);
	assert_int_equal(s.timeout[1][1], 18000);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_side),
		cmocka_unit_test(test_host_side),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
