/* The outstanding-query table (agent/outq.h): keys from real messages,
 * what matches, once, in time, and the bound. */
#include "testutil.h"

#include "agent/outq.h"
#include "dnsmsg.h"

static struct tu_dns m;

/* "name IN type", ID id; flags 0x0100 (a query) or 0x8180 (an answer). */
static void msg(uint16_t id, unsigned flags, const char *name, unsigned type)
{
	m.n = 0;
	tu_put16(&m, id);
	tu_put16(&m, flags);
	tu_put16(&m, 1);
	tu_put16(&m, flags & 0x8000 ? 1 : 0);
	tu_put16(&m, 0);
	tu_put16(&m, 0);
	tu_name(&m, name);
	tu_put16(&m, type);
	tu_put16(&m, 1);
	if (flags & 0x8000) { /* one A record, by a pointer to the question */
		tu_ptr(&m, 12);
		tu_put16(&m, 1);
		tu_put16(&m, 1);
		tu_put32(&m, 60);
		tu_put16(&m, 4);
		tu_put(&m, "\x0a\x00\x00\x01", 4);
	}
}

static struct ng_ip ip(const char *s)
{
	struct ng_ip a;

	assert_int_equal(ng_ip_parse(s, &a), 0);
	return a;
}

static void key(struct ng_outq_key *k, uint16_t id, unsigned flags, const char *name, unsigned type,
		const char *resolver, uint8_t proto, uint16_t port)
{
	struct ng_ip r = ip(resolver);

	msg(id, flags, name, type);
	assert_int_equal(ng_outq_key_of(m.b, m.n, &r, proto, port, k), 0);
}

static void test_answer_matches_its_query_once(void **state)
{
	struct ng_outq q = {0};
	struct ng_outq_key k, a;

	(void)state;
	key(&k, 7, 0x0100, "Api.World.TEST", 1, "10.96.0.10", 17, 40000);
	assert_int_equal(ng_outq_add(&q, &k, 1000), 0);
	/* Another ID, port, resolver, transport, type or name: no match. */
	key(&a, 8, 0x8180, "api.world.test", 1, "10.96.0.10", 17, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.test", 1, "10.96.0.10", 17, 40001);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.test", 1, "10.96.0.11", 17, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.test", 1, "10.96.0.10", 6, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.test", 28, "10.96.0.10", 17, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.tesu", 1, "10.96.0.10", 17, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	key(&a, 7, 0x8180, "api.world.test.evil", 1, "10.96.0.10", 17, 40000);
	assert_false(ng_outq_take(&q, &a, 1001));
	assert_int_equal(q.n, 1);
	/* The answer, in any case: once. */
	key(&a, 7, 0x8180, "API.world.test", 1, "10.96.0.10", 17, 40000);
	assert_true(ng_outq_take(&q, &a, 1002));
	assert_false(ng_outq_take(&q, &a, 1003));
	assert_int_equal(q.n, 0);
	ng_outq_free(&q);
}

static void test_late_answers_and_expiry(void **state)
{
	struct ng_outq q = {0};
	struct ng_outq_key k;

	(void)state;
	key(&k, 1, 0x0100, "a.test", 1, "fd00:10:96::a", 17, 5000);
	assert_int_equal(ng_outq_add(&q, &k, 0), 0);
	/* A retransmission renews its time. */
	assert_int_equal(ng_outq_add(&q, &k, 5000), 0);
	assert_int_equal(q.n, 1);
	assert_int_equal(ng_outq_expire(&q, 5000 + NG_OUTQ_TTL_MS), 0);
	assert_int_equal(ng_outq_expire(&q, 5001 + NG_OUTQ_TTL_MS), 1);
	assert_int_equal(q.n, 0);
	/* Too late even before the sweep: no match. */
	assert_int_equal(ng_outq_add(&q, &k, 0), 0);
	assert_false(ng_outq_take(&q, &k, NG_OUTQ_TTL_MS + 1));
	assert_int_equal(q.n, 0);
	ng_outq_free(&q);
}

static void test_bound_forgets_the_oldest(void **state)
{
	struct ng_outq q = {0};
	struct ng_outq_key k;

	(void)state;
	for (unsigned i = 0; i < NG_OUTQ_MAX; i++) {
		key(&k, (uint16_t)i, 0x0100, "a.test", 1, "10.96.0.10", 17, 5000);
		assert_int_equal(ng_outq_add(&q, &k, 100 + i), 0);
	}
	key(&k, 9999, 0x0100, "a.test", 1, "10.96.0.10", 17, 5000);
	assert_int_equal(ng_outq_add(&q, &k, 1000), 1);
	assert_int_equal(q.n, NG_OUTQ_MAX);
	assert_true(ng_outq_take(&q, &k, 1001));
	key(&k, 0, 0x0100, "a.test", 1, "10.96.0.10", 17, 5000); /* the oldest: gone */
	assert_false(ng_outq_take(&q, &k, 1001));
	key(&k, 1, 0x0100, "a.test", 1, "10.96.0.10", 17, 5000);
	assert_true(ng_outq_take(&q, &k, 1001));
	ng_outq_free(&q);
}

static void test_messages_without_a_plain_question(void **state)
{
	struct ng_ip r = ip("10.96.0.10");
	struct ng_outq_key k;

	(void)state;
	msg(1, 0x0100, "a.test", 1);
	/* Two questions, none, truncated, a pointer in the question. */
	m.b[5] = 2;
	assert_int_equal(ng_outq_key_of(m.b, m.n, &r, 17, 1, &k), -1);
	m.b[5] = 0;
	assert_int_equal(ng_outq_key_of(m.b, m.n, &r, 17, 1, &k), -1);
	m.b[5] = 1;
	assert_int_equal(ng_outq_key_of(m.b, m.n - 1, &r, 17, 1, &k), -1);
	assert_int_equal(ng_outq_key_of(m.b, 11, &r, 17, 1, &k), -1);
	m.n = 12;
	tu_ptr(&m, 12);
	tu_put32(&m, 0x00010001);
	assert_int_equal(ng_outq_key_of(m.b, m.n, &r, 17, 1, &k), -1);
	/* The root: a question of its own. */
	m.n = 12;
	tu_put(&m, "", 1);
	tu_put32(&m, 0x00020001);
	assert_int_equal(ng_outq_key_of(m.b, m.n, &r, 17, 1, &k), 0);
	assert_int_equal(k.qlen, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_matches_its_query_once),
		cmocka_unit_test(test_late_answers_and_expiry),
		cmocka_unit_test(test_bound_forgets_the_oldest),
		cmocka_unit_test(test_messages_without_a_plain_question),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
