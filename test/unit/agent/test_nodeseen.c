/* The node side's question (agent/nodeseen.h): an answer teaches it only
 * when the node saw exactly its bytes answer a query it saw leave on the
 * same flow, outstanding, within the bounds; everything else (no query, a
 * wrong ID, port, name, type, a second answer, a looped copy that differs
 * by a byte, what expired or was pushed out) does not. */
#include "testutil.h"

#include "agent/nodeseen.h"
#include "dnsmsg.h"

static struct ng_dns_msg *scratch;

static int setup(void **state)
{
	(void)state;
	scratch = malloc(sizeof(*scratch));
	return scratch ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(scratch);
	return 0;
}

/* A query (qr 0) or an answer (qr 1, one A record `ip` when given) for
 * name/type with ID id. */
static void msg(struct tu_dns *m, unsigned id, bool qr, const char *name, unsigned type, const char *ip)
{
	m->n = 0;
	tu_put16(m, id);
	tu_put16(m, qr ? 0x8180 : 0x0100);
	tu_put16(m, 1);
	tu_put16(m, qr && ip ? 1 : 0);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, name);
	tu_put16(m, type);
	tu_put16(m, 1);
	if (qr && ip) {
		struct ng_ip a;

		assert_int_equal(ng_ip_parse(ip, &a), 0);
		tu_ptr(m, 12);
		tu_put16(m, 1);
		tu_put16(m, 1);
		tu_put32(m, 300);
		tu_put16(m, 4);
		tu_put(m, a.a, 4);
	}
}

static struct ng_dns_flow flow(uint8_t proto, uint16_t pod_port)
{
	struct ng_dns_flow f = {.proto = proto, .pod_port = pod_port, .server_port = 53};

	assert_int_equal(ng_ip_parse("10.0.0.5", &f.pod), 0);
	assert_int_equal(ng_ip_parse("10.96.0.10", &f.server), 0);
	return f;
}

/* Query then answer seen by the node on fl; the answer's bytes in *ans. */
static void exchange(struct ng_nodeseen *s, const struct ng_dns_flow *fl, unsigned id, struct tu_dns *ans,
		     int64_t now)
{
	struct tu_dns q;

	msg(&q, id, false, "Example.COM", 1, NULL);
	assert_true(ng_seen_query(s, fl, q.b, q.n, now));
	msg(ans, id, true, "example.com", 1, "192.0.2.7");
	assert_true(ng_seen_answer(s, fl, ans->b, ans->n, now + 1, scratch));
}

static void test_seen_answer_vouches(void **state)
{
	struct ng_nodeseen s = {0};
	struct ng_dns_flow fl = flow(17, 40000);
	static struct tu_dns ans;

	(void)state;
	exchange(&s, &fl, 0x1234, &ans, 1000);
	assert_true(ng_seen_vouch(&s, &fl, ans.b, ans.n, 1002));
	/* Kept for retries of the same bytes, until its bound. */
	assert_true(ng_seen_vouch(&s, &fl, ans.b, ans.n, 1003));
	assert_false(ng_seen_vouch(&s, &fl, ans.b, ans.n, 1001 + NG_SEEN_ANSWER_MS + 1));
	assert_int_equal(s.c.queries, 1);
	assert_int_equal(s.c.matched, 1);
	ng_seen_free(&s);
}

/* The pod loops its own answer: the node never saw these bytes. */
static void test_unseen_bytes_do_not(void **state)
{
	struct ng_nodeseen s = {0};
	struct ng_dns_flow fl = flow(17, 40000), other = flow(17, 40001), tcp = flow(6, 40000);
	static struct tu_dns ans, forged;

	(void)state;
	exchange(&s, &fl, 0x1234, &ans, 1000);
	msg(&forged, 0x1234, true, "example.com", 1, "203.0.113.66");
	assert_false(ng_seen_vouch(&s, &fl, forged.b, forged.n, 1002));
	/* One byte more or less, another flow, another protocol. */
	assert_false(ng_seen_vouch(&s, &fl, ans.b, ans.n - 1, 1002));
	ans.b[ans.n] = 0;
	assert_false(ng_seen_vouch(&s, &fl, ans.b, ans.n + 1, 1002));
	assert_false(ng_seen_vouch(&s, &other, ans.b, ans.n, 1002));
	assert_false(ng_seen_vouch(&s, &tcp, ans.b, ans.n, 1002));
	/* Nothing seen at all. */
	ng_seen_free(&s);
	assert_false(ng_seen_vouch(&s, &fl, ans.b, ans.n, 1002));
}

/* Answers the node saw that answer no outstanding query are never kept. */
static void test_unmatched_answers(void **state)
{
	struct ng_nodeseen s = {0};
	struct ng_dns_flow fl = flow(17, 40000), guessed = flow(17, 40001);
	static struct tu_dns q, a;

	(void)state;
	/* No query at all, though the ID is right. */
	msg(&a, 0x1234, true, "example.com", 1, "203.0.113.66");
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, 1000, scratch));
	assert_false(ng_seen_vouch(&s, &fl, a.b, a.n, 1000));

	msg(&q, 0x1234, false, "example.com", 1, NULL);
	assert_true(ng_seen_query(&s, &fl, q.b, q.n, 1000));
	/* A wrong ID, a guessed port, another name, another type. */
	msg(&a, 0x4321, true, "example.com", 1, "203.0.113.66");
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, 1001, scratch));
	msg(&a, 0x1234, true, "example.com", 1, "203.0.113.66");
	assert_false(ng_seen_answer(&s, &guessed, a.b, a.n, 1001, scratch));
	msg(&a, 0x1234, true, "example.org", 1, "203.0.113.66");
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, 1001, scratch));
	msg(&a, 0x1234, true, "example.com", 28, NULL);
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, 1001, scratch));
	/* A query echoed back (QR clear) is no answer. */
	assert_false(ng_seen_answer(&s, &fl, q.b, q.n, 1001, scratch));
	assert_int_equal(s.c.unmatched, 6);

	/* The right one, then a second answer to the same query. */
	msg(&a, 0x1234, true, "EXAMPLE.com", 1, "192.0.2.7");
	assert_true(ng_seen_answer(&s, &fl, a.b, a.n, 1002, scratch));
	msg(&a, 0x1234, true, "example.com", 1, "203.0.113.66");
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, 1003, scratch));
	assert_false(ng_seen_vouch(&s, &fl, a.b, a.n, 1003));
	ng_seen_free(&s);
}

/* A query waits NG_SEEN_QUERY_MS, no longer; a malformed one is not one. */
static void test_query_bounds(void **state)
{
	struct ng_nodeseen s = {0};
	struct ng_dns_flow fl = flow(17, 40000);
	static struct tu_dns q, a;

	(void)state;
	msg(&q, 7, false, "example.com", 1, NULL);
	assert_false(ng_seen_query(&s, &fl, q.b, q.n - 1, 0));
	assert_true(ng_seen_query(&s, &fl, q.b, q.n, 0));
	msg(&a, 7, true, "example.com", 1, "192.0.2.7");
	assert_false(ng_seen_answer(&s, &fl, a.b, a.n, NG_SEEN_QUERY_MS + 1, scratch));
	/* A retransmission renews it. */
	assert_true(ng_seen_query(&s, &fl, q.b, q.n, 100));
	assert_true(ng_seen_query(&s, &fl, q.b, q.n, 100 + NG_SEEN_QUERY_MS - 10));
	assert_true(ng_seen_answer(&s, &fl, a.b, a.n, 100 + NG_SEEN_QUERY_MS, scratch));
	ng_seen_free(&s);
}

/* The oldest query and answer go first; bytes are bounded. */
static void test_bounds(void **state)
{
	struct ng_nodeseen s = {0};
	static struct tu_dns q, a, first;

	(void)state;
	for (unsigned i = 0; i <= NG_SEEN_QUERIES; i++) {
		struct ng_dns_flow fl = flow(17, (uint16_t)(30000 + i));

		msg(&q, i, false, "example.com", 1, NULL);
		assert_true(ng_seen_query(&s, &fl, q.b, q.n, 10 + i));
	}
	assert_int_equal(s.c.evicted, 1);
	{
		struct ng_dns_flow fl0 = flow(17, 30000), fl1 = flow(17, 30001);

		msg(&a, 0, true, "example.com", 1, "192.0.2.7");
		assert_false(ng_seen_answer(&s, &fl0, a.b, a.n, 100, scratch));
		msg(&first, 1, true, "example.com", 1, "192.0.2.7");
		assert_true(ng_seen_answer(&s, &fl1, first.b, first.n, 100, scratch));
		assert_true(ng_seen_vouch(&s, &fl1, first.b, first.n, 100));
	}
	/* NG_SEEN_ANSWERS more answers push the first one out. */
	for (unsigned i = 2; i < 2 + NG_SEEN_ANSWERS; i++) {
		struct ng_dns_flow fl = flow(17, (uint16_t)(30000 + i));

		msg(&a, i, true, "example.com", 1, "192.0.2.7");
		assert_true(ng_seen_answer(&s, &fl, a.b, a.n, 200 + i, scratch));
	}
	{
		struct ng_dns_flow fl1 = flow(17, 30001);

		assert_false(ng_seen_vouch(&s, &fl1, first.b, first.n, 300));
	}
	assert_true(ng_seen_held(&s) <= NG_SEEN_BYTES);
	assert_int_equal(ng_seen_held(&s), (size_t)NG_SEEN_ANSWERS * a.n);
	ng_seen_free(&s);
	assert_int_equal(ng_seen_held(&s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seen_answer_vouches),
		cmocka_unit_test(test_unseen_bytes_do_not),
		cmocka_unit_test(test_unmatched_answers),
		cmocka_unit_test(test_query_bounds),
		cmocka_unit_test(test_bounds),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
