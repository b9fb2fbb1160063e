/* The agent's commit of learned elements (kernel/learncommit.h) against
 * the fake kernel: what one commit sends for a mix of new and refreshed
 * elements to a pod's inet table and packet-socket guard and to its
 * host-side table (one acknowledged transaction per namespace, the pod's
 * first, deletes before adds); a refresh refused with ENOENT sent again as
 * plain adds, once, on both sides; any other refusal final (the node side
 * then never sent). */
#include "fake_setelems.h"

#include <linux/netfilter.h>

#include "kernel/learncommit.h"

#define HOST "ngh.c0ffee.eth0"

struct world {
	struct ng_policy pol;
	struct ng_set_spec sets[NG_S_COUNT];
	ng_learned_table_vec tables;
	struct ng_learned_update u;
	struct se_log pod, node;
	struct ng_nl pod_nl, node_nl;
};

static void add_table(struct world *w, bool in_node, uint8_t family, const char *name)
{
	struct ng_learned_table t = {.in_node = in_node, .family = family};

	snprintf(t.name, sizeof(t.name), "%s", name);
	assert_int_equal(ng_vec_push(&w->tables, &t), 0);
}

static void elem(ng_elem_vec *v, const char *ip, uint16_t lo, uint16_t hi, uint32_t timeout)
{
	struct ng_elem e = {.proto = 6, .p_lo = lo, .p_hi = hi, .timeout = timeout};

	assert_int_equal(ng_ip_parse(ip, &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(ng_vec_push(v, &e), 0);
}

/* Tables on both sides; 10.0.0.1 new, 10.0.0.2 refreshed (names_v4),
 * 10.0.0.3:8000-8100 refreshed (names_v4_ranges), fd00::1 new
 * (names_v6). */
static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->pol.learn = true;
	ng_render_set_specs(&w->pol, w->sets);
	add_table(w, false, NFPROTO_INET, NG_TABLE);
	add_table(w, false, NFPROTO_NETDEV, NG_TABLE);
	add_table(w, true, NFPROTO_NETDEV, HOST);
	elem(&w->u.add[0][0], "10.0.0.1", 443, 443, 60);
	elem(&w->u.add[0][0], "10.0.0.2", 443, 443, 300);
	elem(&w->u.refresh[0][0], "10.0.0.2", 443, 443, 300);
	elem(&w->u.add[1][0], "10.0.0.3", 8000, 8100, 90);
	elem(&w->u.refresh[1][0], "10.0.0.3", 8000, 8100, 90);
	elem(&w->u.add[0][1], "fd00::1", 443, 443, 120);
	se_open(&w->pod, w->sets, &w->pod_nl);
	se_open(&w->node, w->sets, &w->node_nl);
	return w;
}

static void world_free(struct world *w)
{
	se_close(&w->pod);
	se_close(&w->node);
	ng_learned_update_free(&w->u);
	ng_vec_free(&w->tables);
	free(w);
}

static int commit(struct world *w, struct ng_nl *node_nl, struct ng_err *err)
{
	memset(err, 0, sizeof(*err));
	return ng_learned_commit(&w->pod_nl, node_nl, &w->tables, w->sets, &w->u, err);
}

/* The messages one table got in batch `batch`, in order, as
 * "DEL names_v4 1,NEW names_v4 2,..." (type, set, element count). */
static void table_msgs(const struct se_log *l, int batch, uint8_t family, const char *table, char *out,
		       size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < l->n; i++) {
		const struct se_msg *m = &l->m[i];

		if (m->batch != batch || m->family != family || strcmp(m->table, table) != 0)
			continue;
		o += (size_t)snprintf(out + o, len - o, "%s%s %s %d", o ? "," : "",
				      m->type == NFT_MSG_DELSETELEM ? "DEL" : "NEW", m->set, m->n);
	}
}

#define SENT_WITH_REFRESH \
	"DEL names_v4 1,NEW names_v4 2,DEL names_v4_ranges 1,NEW names_v4_ranges 1,NEW names_v6 1"
#define SENT_PLAIN "NEW names_v4 2,NEW names_v4_ranges 1,NEW names_v6 1"

static void test_mix_on_both_sides(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err;
	char got[512];

	assert_int_equal(commit(w, &w->node_nl, &err), 0);
	/* One transaction per namespace, each acknowledged (batch + marker). */
	assert_int_equal(w->pod.batches, 1);
	assert_int_equal(w->pod.f->sends, 2);
	assert_int_equal(w->node.batches, 1);
	assert_int_equal(w->node.f->sends, 2);
	/* The pod's two tables in its one transaction, the host side in the
	 * node's: deletes before the adds that follow them, per set. */
	table_msgs(&w->pod, 0, NFPROTO_INET, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_WITH_REFRESH);
	table_msgs(&w->pod, 0, NFPROTO_NETDEV, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_WITH_REFRESH);
	table_msgs(&w->pod, 0, NFPROTO_NETDEV, HOST, got, sizeof(got));
	assert_string_equal(got, "");
	table_msgs(&w->node, 0, NFPROTO_NETDEV, HOST, got, sizeof(got));
	assert_string_equal(got, SENT_WITH_REFRESH);
	assert_int_equal(w->node.n, 5);
	/* The elements themselves: the refreshed one deleted, both added
	 * with their own timeouts; the range with its end. */
	assert_int_equal(w->pod.m[0].type, NFT_MSG_DELSETELEM);
	assert_int_equal(se_find(&w->pod.m[0], "10.0.0.2", 443), 0);
	assert_int_equal(se_find(&w->pod.m[0], "10.0.0.1", 443), -1);
	assert_int_equal(w->pod.m[1].timeout_ms[se_find(&w->pod.m[1], "10.0.0.1", 443)], 60000);
	assert_int_equal(w->pod.m[1].timeout_ms[se_find(&w->pod.m[1], "10.0.0.2", 443)], 300000);
	assert_int_equal(w->pod.m[3].el[0].p_hi, 8100);
	assert_int_equal(w->pod.m[3].timeout_ms[0], 90000);
	assert_int_equal(se_find(&w->pod.m[4], "fd00::1", 443), 0);
	world_free(w);
}

static void test_pod_only(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err;

	/* No host-side table: nothing for the node, not even a socket. */
	w->tables.n = 2;
	assert_int_equal(commit(w, NULL, &err), 0);
	assert_int_equal(w->pod.batches, 1);
	/* A host-side table but no node socket: the pod's side was committed,
	 * the commit is not. */
	w->tables.n = 3;
	assert_int_equal(commit(w, NULL, &err), -1);
	assert_contains(err.msg, "no netfilter socket in the node's namespace");
	assert_int_equal(w->pod.batches, 2);
	world_free(w);
}

static void test_enoent_sent_again_as_plain_adds(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err;
	char got[512];

	/* The refreshed element has just expired in the pod: its delete fails. */
	w->pod.f->sc[0].fail_index = 0;
	w->pod.f->sc[0].fail_errno = ENOENT;
	assert_int_equal(commit(w, &w->node_nl, &err), 0);
	assert_int_equal(w->pod.batches, 2);
	table_msgs(&w->pod, 1, NFPROTO_INET, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_PLAIN);
	table_msgs(&w->pod, 1, NFPROTO_NETDEV, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_PLAIN);
	/* The node's side never saw the refused pass: once, plain. */
	assert_int_equal(w->node.batches, 1);
	table_msgs(&w->node, 0, NFPROTO_NETDEV, HOST, got, sizeof(got));
	assert_string_equal(got, SENT_PLAIN);
	world_free(w);

	/* Refused on the node's side: both sides again, plain. */
	w = world_new();
	w->node.f->sc[0].fail_index = 0;
	w->node.f->sc[0].fail_errno = ENOENT;
	assert_int_equal(commit(w, &w->node_nl, &err), 0);
	assert_int_equal(w->pod.batches, 2);
	assert_int_equal(w->node.batches, 2);
	table_msgs(&w->pod, 0, NFPROTO_INET, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_WITH_REFRESH);
	table_msgs(&w->pod, 1, NFPROTO_INET, NG_TABLE, got, sizeof(got));
	assert_string_equal(got, SENT_PLAIN);
	table_msgs(&w->node, 1, NFPROTO_NETDEV, HOST, got, sizeof(got));
	assert_string_equal(got, SENT_PLAIN);
	world_free(w);

	/* ENOENT again on the plain pass: that is the answer, no third try. */
	w = world_new();
	for (int i = 0; i < 2; i++) {
		w->pod.f->sc[i].fail_index = 0;
		w->pod.f->sc[i].fail_errno = ENOENT;
	}
	assert_int_equal(commit(w, &w->node_nl, &err), -1);
	assert_int_equal(w->pod.batches, 2);
	assert_int_equal(w->node.batches, 0);
	assert_contains(err.msg, "no such object");
	world_free(w);
}

static void test_other_refusals_are_final(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_err err;

	/* The pod's side refused: the node's never sent, nothing retried. */
	w->pod.f->sc[0].refuse_errno = EPERM;
	assert_int_equal(commit(w, &w->node_nl, &err), -1);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_contains(err.msg, "refused the transaction");
	assert_int_equal(w->pod.batches, 1);
	assert_int_equal(w->node.batches, 0);
	world_free(w);

	/* A full set on the node's side: refused, no second pass. */
	w = world_new();
	w->node.f->sc[0].fail_index = 1;
	w->node.f->sc[0].fail_errno = ENOSPC;
	assert_int_equal(commit(w, &w->node_nl, &err), -1);
	assert_int_equal(w->pod.batches, 1);
	assert_int_equal(w->node.batches, 1);
	world_free(w);

	/* ENOENT with nothing to delete (a table gone): the same batch would
	 * only fail again. */
	w = world_new();
	for (int r = 0; r < 2; r++)
		for (int f = 0; f < 2; f++)
			w->u.refresh[r][f].n = 0;
	w->pod.f->sc[0].fail_index = 0;
	w->pod.f->sc[0].fail_errno = ENOENT;
	assert_int_equal(commit(w, &w->node_nl, &err), -1);
	assert_int_equal(w->pod.batches, 1);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mix_on_both_sides),
		cmocka_unit_test(test_pod_only),
		cmocka_unit_test(test_enoent_sent_again_as_plain_adds),
		cmocka_unit_test(test_other_refusals_are_final),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
