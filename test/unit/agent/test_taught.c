/* What each name entry taught (agent/taught.h) and the rows of `status
 * --names`: two entries on the same port share an element, yet each
 * address shows under the name that taught it; each side's expiry as the
 * trackers hold it (unix ms), the guard and node sides; a live
 * connection's renewal marks the row kept alive (an answer's clears it);
 * an element no pair names (learned before a restart) shows under no
 * name; pairs go when no tracker holds their elements; the bounds. */
#include "testutil.h"

#include "agent/taught.h"
#include "agent/tracker.h"

static struct ng_policy pol(void)
{
	struct ng_policy p = {0};
	struct ng_name_entry api = {.name = "api.example.com", .proto = 6, .p_lo = 443, .p_hi = 443};
	struct ng_name_entry any = {
		.name = "example.com", .wildcard = true, .proto = 6, .p_lo = 443, .p_hi = 443};
	struct ng_name_entry dns = {.name = "ns.example.com", .proto = 17, .p_lo = 53, .p_hi = 54};
	struct ng_elem pieces[] = {{.proto = 6, .p_lo = 443, .p_hi = 443},
				   {.proto = 17, .p_lo = 53, .p_hi = 54}};

	assert_int_equal(ng_vec_push(&p.name_entries, &api), 0);
	assert_int_equal(ng_vec_push(&p.name_entries, &any), 0);
	assert_int_equal(ng_vec_push(&p.name_entries, &dns), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ng_vec_push(&p.name_pieces, &pieces[i]), 0);
	return p;
}

static struct ng_ip ip(const char *s)
{
	struct ng_ip a;

	assert_int_equal(ng_ip_parse(s, &a), 0);
	return a;
}

/* Plans one element into t at `now`, `life` seconds. */
static void learn(struct ng_tracker *t, const char *addr, uint8_t proto, uint16_t lo, uint16_t hi,
		  uint32_t life, int64_t now)
{
	struct ng_learn_result r = {0};
	struct ng_elem e = {
		.lo = ip(addr), .hi = ip(addr), .proto = proto, .p_lo = lo, .p_hi = hi, .timeout = life};
	ng_pending_vec p = {0};
	unsigned full = 0;

	assert_int_equal(
		ng_vec_push(lo == hi ? &r.single[NG_FAM_IDX(e.lo.fam)] : &r.ranges[NG_FAM_IDX(e.lo.fam)], &e),
		0);
	assert_int_equal(ng_tracker_plan(t, &r, now, &p, &full), 0);
	ng_vec_free(&p);
	ng_learn_result_free(&r);
}

static const struct ng_view_learned *row(const struct ng_view_pod *v, const char *name, const char *addr)
{
	struct ng_ip a = ip(addr);

	for (size_t i = 0; i < v->taught.n; i++) {
		const struct ng_view_learned *r = &v->taught.v[i];
		bool named = r->name == NG_VIEW_NAME_NONE
				     ? !name
				     : name && !strcmp(v->taught_names.v[r->name].name, name);

		if (named && ng_ip_eq(&r->ip, &a))
			return r;
	}
	return NULL;
}

static void test_rows(void **state)
{
	(void)state;
	struct ng_policy p = pol();
	struct ng_taught t;
	struct ng_tracker tr = {0}, tr_node = {0};
	struct ng_view_pod v = {0};
	const struct ng_view_learned *r;
	struct ng_ip a = ip("10.0.0.1"), b = ip("10.0.0.2");

	assert_int_equal(ng_taught_init(&t, &p), 0);
	ng_policy_free(&p); /* the table keeps its own copies */
	assert_int_equal(ng_taught_note(&t, 0, &a), 1);
	assert_int_equal(ng_taught_note(&t, 0, &a), 0);
	assert_int_equal(ng_taught_note(&t, 1, &b), 1);
	assert_int_equal(ng_taught_note(&t, 7, &b), -1); /* no such entry */
	assert_true(ng_taught_has(&t, 0, &a));
	assert_false(ng_taught_has(&t, 1, &a));
	learn(&tr, "10.0.0.1", 6, 443, 443, 60, 1000);
	learn(&tr, "10.0.0.2", 6, 443, 443, 30, 1000);
	learn(&tr_node, "10.0.0.1", 6, 443, 443, 60, 1000);
	learn(&tr, "10.0.0.9", 6, 443, 443, 60, 1000); /* no pair: before a restart */

	/* now: mono 11000, wall 1796000000000 */
	assert_int_equal(ng_taught_rows(&t, &tr, &tr_node, 11000, 1796000000000LL, 100, &v), 0);
	assert_true(v.has_taught);
	assert_int_equal(v.taught_names.n, 3);
	assert_string_equal(v.taught_names.v[1].name, "*.example.com");
	assert_string_equal(v.taught_names.v[2].proto_ports, "udp/53-54");
	assert_int_equal(v.taught.n, 3);
	r = row(&v, "api.example.com", "10.0.0.1");
	assert_non_null(r);
	assert_int_equal(r->pod_expires_ms, 1796000000000LL + 50000); /* 61 s - 11 s */
	assert_int_equal(r->node_expires_ms, 1796000000000LL + 50000);
	assert_false(r->kept_alive);
	assert_int_equal(r->p_lo, 443);
	r = row(&v, "*.example.com", "10.0.0.2");
	assert_non_null(r);
	assert_int_equal(r->node_expires_ms, 0); /* the node side does not hold it */
	assert_null(row(&v, "api.example.com", "10.0.0.2"));
	assert_non_null(row(&v, NULL, "10.0.0.9"));
	assert_int_equal(v.taught_names.v[0].addresses, 1);

	/* A live connection renews 10.0.0.2's lease: kept alive. */
	struct ng_tracker_due due;
	ng_pending_vec pend = {0};

	assert_int_equal(ng_tracker_due(&tr, 25000, 15000, &due), 1);
	assert_int_equal(ng_tracker_keepalive(&tr, &due, &b, 6, 443, &pend), 1);
	ng_tracker_due_free(&due);
	ng_vec_free(&pend);
	assert_int_equal(ng_taught_rows(&t, &tr, &tr_node, 25000, 1796000000000LL, 100, &v), 0);
	r = row(&v, "*.example.com", "10.0.0.2");
	assert_true(r->kept_alive);
	assert_int_equal(r->pod_expires_ms, 1796000000000LL + 30000);
	/* An answer's refresh clears it (a lease from the name again). */
	learn(&tr, "10.0.0.2", 6, 443, 443, 300, 26000);
	assert_int_equal(ng_taught_rows(&t, &tr, &tr_node, 26000, 1796000000000LL, 100, &v), 0);
	assert_false(row(&v, "*.example.com", "10.0.0.2")->kept_alive);

	/* Bounded: the rest counted. */
	assert_int_equal(ng_taught_rows(&t, &tr, &tr_node, 26000, 1796000000000LL, 1, &v), 0);
	assert_int_equal(v.taught.n, 1);
	assert_int_equal(v.taught_more, 2);

	/* Expired on both sides: the pair goes. */
	assert_int_equal(ng_tracker_expire(&tr, 62000), 2);
	assert_int_equal(ng_tracker_expire(&tr_node, 62000), 1);
	assert_int_equal(ng_taught_prune(&t, &tr, &tr_node), 1);
	assert_false(ng_taught_has(&t, 0, &a));
	assert_true(ng_taught_has(&t, 1, &b));
	assert_int_equal(ng_taught_count(&t), 1);

	ng_view_pod_free(&v);
	ng_tracker_free(&tr);
	ng_tracker_free(&tr_node);
	ng_taught_free(&t);
}

static void test_bound(void **state)
{
	(void)state;
	struct ng_policy p = pol();
	struct ng_taught t;
	struct ng_ip a = ip("10.0.0.0");
	int noted = 0;

	assert_int_equal(ng_taught_init(&t, &p), 0);
	for (uint32_t i = 0; i < NG_TRACK_MAX + 10; i++) {
		a.a[2] = (uint8_t)(i >> 8);
		a.a[3] = (uint8_t)i;
		a.a[1] = (uint8_t)(i >> 16);
		noted += ng_taught_note(&t, 0, &a) == 1;
	}
	assert_int_equal(noted, NG_TRACK_MAX);
	assert_int_equal(t.full, 10);
	assert_int_equal(ng_taught_count(&t), NG_TRACK_MAX);
	ng_taught_free(&t);
	ng_policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
