/* DNS answers (A/AAAA with TTL) parsed from wire bytes, and the resolver
 * driver with a fake resolver. */
#include "testutil.h"

#include "dnsmsg.h"

#include "policy/dnsparse.h"
#include "kernel/resolve.h"

/* Response header + question for s3.example.com. */
static struct tu_dns response(uint16_t qtype, uint16_t ancount)
{
	static const uint8_t qname[] = "\x02s3\x07"
				       "example\x03"
				       "com";
	struct tu_dns m = {0};

	tu_put16(&m, 0x1234);
	tu_put16(&m, 0x8180); /* response, recursion */
	tu_put16(&m, 1);
	tu_put16(&m, ancount);
	tu_put16(&m, 0);
	tu_put16(&m, 0);
	tu_put(&m, qname, sizeof(qname)); /* includes the root label's 0 */
	tu_put16(&m, qtype);
	tu_put16(&m, 1);
	return m;
}

static void rr(struct tu_dns *m, uint16_t type, uint32_t ttl, const void *rdata, uint16_t rdlen)
{
	tu_put16(m, 0xc00c); /* pointer to the question name */
	tu_put16(m, type);
	tu_put16(m, 1);
	tu_put32(m, ttl);
	tu_put16(m, rdlen);
	tu_put(m, rdata, rdlen);
}

static void test_a_records(void **state)
{
	(void)state;
	struct tu_dns m = response(1, 3);
	struct ng_resolved_name out = {0};
	uint8_t a1[4] = {10, 50, 0, 1}, a2[4] = {10, 50, 0, 2};
	static const uint8_t cname[] = "\x03"
				       "cdn\xc0\x0f"; /* cdn.example.com */
	char buf[NG_IP_STRLEN];

	rr(&m, 5, 300, cname, sizeof(cname) - 1); /* CNAME first, skipped */
	rr(&m, 1, 60, a1, 4);
	rr(&m, 1, 0x80000000u, a2, 4); /* top bit set: treated as 0 */
	assert_int_equal(ng_dns_parse_answers(m.b, m.n, 1, &out), 2);
	ng_ip_format(&out.answers.v[0].ip, buf, sizeof(buf));
	assert_string_equal(buf, "10.50.0.1");
	assert_int_equal(out.answers.v[0].ttl, 60);
	assert_int_equal(out.answers.v[1].ttl, 0);
	ng_vec_free(&out.answers);
}

static void test_aaaa_records(void **state)
{
	(void)state;
	struct tu_dns m = response(28, 2);
	struct ng_resolved_name out = {0};
	uint8_t a6[16] = {0xfd, 0, 0, 0x50, [15] = 1};
	uint8_t a4[4] = {1, 2, 3, 4};

	rr(&m, 28, 120, a6, 16);
	rr(&m, 1, 120, a4, 4); /* wrong type for the question: ignored */
	assert_int_equal(ng_dns_parse_answers(m.b, m.n, 28, &out), 1);
	assert_int_equal(out.answers.v[0].ip.fam, NG_V6);
	ng_vec_free(&out.answers);
}

static void test_malformed(void **state)
{
	(void)state;
	struct ng_resolved_name out = {0};
	struct tu_dns m = response(1, 1);
	uint8_t a1[4] = {10, 0, 0, 1};

	rr(&m, 1, 60, a1, 4);
	/* Truncated anywhere: never a crash, always -1 or fewer records. */
	for (size_t cut = 0; cut < m.n; cut++)
		assert_true(ng_dns_parse_answers(m.b, cut, 1, &out) <= 0);
	ng_vec_free(&out.answers);
	assert_int_equal(ng_dns_parse_answers(NULL, 0, 1, &out), -1);

	struct tu_dns q = response(1, 1);
	q.b[2] = 0x01; /* a query, not a response */
	assert_int_equal(ng_dns_parse_answers(q.b, q.n, 1, &out), -1);

	/* A record whose rdlength runs past the end. */
	struct tu_dns r = response(1, 1);
	tu_put16(&r, 0xc00c);
	tu_put16(&r, 1);
	tu_put16(&r, 1);
	tu_put32(&r, 60);
	tu_put16(&r, 200);
	assert_int_equal(ng_dns_parse_answers(r.b, r.n, 1, &out), -1);

	/* Pointers that go backward, but too many of them: a TXT record's
	 * rdata (never read) holds a chain of pointers, each to the one
	 * before, the first to the question; an A record's owner points at
	 * its end. With NG_DNS_MAX_JUMPS jumps in all it is the question's
	 * name; one more and the message is malformed. */
	for (int extra = 0; extra < 2; extra++) {
		struct tu_dns c = response(1, 2);
		int k = NG_DNS_MAX_JUMPS - 1 + extra;
		size_t prev = 12;

		tu_ptr(&c, 12);
		tu_put16(&c, 16);
		tu_put16(&c, 1);
		tu_put32(&c, 60);
		tu_put16(&c, (unsigned)(2 * k));
		for (int i = 0; i < k; i++) {
			size_t here = c.n;

			tu_ptr(&c, prev);
			prev = here;
		}
		tu_ptr(&c, prev);
		tu_put16(&c, 1);
		tu_put16(&c, 1);
		tu_put32(&c, 60);
		tu_put16(&c, 4);
		tu_put32(&c, 0x0a000001);
		assert_int_equal(ng_dns_parse_answers(c.b, c.n, 1, &out), extra ? -1 : 1);
	}
	ng_vec_free(&out.answers);

	/* A reserved label type (0x40) in a name. */
	struct tu_dns s = response(1, 0);
	s.b[12] = 0x42;
	assert_int_equal(ng_dns_parse_answers(s.b, s.n, 1, &out), -1);
	ng_vec_free(&out.answers);
}

static int fake_resolver(const char *name, long budget_ms, struct ng_resolved_name *out, struct ng_err *err)
{
	struct ng_answer a = {.ttl = 30};

	assert_true(budget_ms > 0 && budget_ms <= 10000);

	if (strcmp(name, "bad.example.com") == 0)
		return ng_fail(err, NG_E_TRY_AGAIN, "DNS name %s did not resolve", name);
	ng_ip_parse("10.50.0.9", &a.ip);
	return ng_vec_push(&out->answers, &a);
}

static void test_resolve_all(void **state)
{
	(void)state;
	ng_name_list names = {0};
	ng_resolved res = {0};
	struct ng_err err = {0};
	const char *a = "s3.example.com", *b = "bad.example.com";

	ng_vec_push(&names, &a);
	assert_int_equal(ng_resolve_all(&names, fake_resolver, 10000, &res, &err), 0);
	assert_int_equal(res.n, 1);
	assert_string_equal(res.v[0].name, "s3.example.com");
	ng_resolved_free(&res);
	ng_vec_push(&names, &b);
	assert_int_equal(ng_resolve_all(&names, fake_resolver, 10000, &res, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "bad.example.com");
	ng_resolved_free(&res);
	ng_vec_free(&names);
}

/* A resolver that records the budget it got. The first call takes 2 ms;
 * the call numbered `spend_at` takes all that is left of its budget and
 * 1 ms more, so that the budget is over when it returns however loaded the
 * machine is (a fixed 30 ms each against a 50 ms budget failed whenever a
 * sleep overran by 20 ms). */
static long budgets[8];
static int calls, spend_at;

static int slow_resolver(const char *name, long budget_ms, struct ng_resolved_name *out, struct ng_err *err)
{
	long ms = calls == spend_at ? budget_ms + 1 : 2;
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	budgets[calls++] = budget_ms;
	while (nanosleep(&ts, &ts) < 0)
		;
	return fake_resolver(name, 1, out, err);
}

/* The names of one ADD share one budget: once the second name has used it
 * up, the third does not start, the error is code 11 and says how far it
 * got, and each call is told how much is left. The 1000 ms budget is a
 * correctness bound: the 2 ms first call must return within it. */
static void test_resolve_budget(void **state)
{
	(void)state;
	ng_name_list names = {0};
	ng_resolved res = {0};
	struct ng_err err = {0};
	const char *n[] = {"a.example.com", "b.example.com", "c.example.com"};

	for (int i = 0; i < 3; i++)
		ng_vec_push(&names, &n[i]);
	calls = 0;
	spend_at = 1;
	assert_int_equal(ng_resolve_all(&names, slow_resolver, 1000, &res, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "budget at c.example.com (2 of 3 names resolved)");
	assert_int_equal(calls, 2);
	assert_true(budgets[0] <= 1000 && budgets[1] < budgets[0] && budgets[1] <= 1000 - 2);
	ng_resolved_free(&res);

	calls = 0;
	spend_at = -1;
	assert_int_equal(ng_resolve_all(&names, slow_resolver, 1000, &res, &err), 0);
	assert_int_equal(res.n, 3);
	assert_int_equal(calls, 3);
	ng_resolved_free(&res);
	ng_vec_free(&names);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_records),
		cmocka_unit_test(test_aaaa_records),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_resolve_all),
		cmocka_unit_test(test_resolve_budget),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("dnsparse", tests, NULL, NULL);
}
