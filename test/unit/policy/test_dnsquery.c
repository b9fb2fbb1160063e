/* DNS queries (policy/dnsquery.h): what leaves the pod and what is
 * answered at once. Each refusal reason, the case- and dot-insensitive
 * match, wildcards by whole labels, dns.alwaysAllowed, and the refusal's
 * bytes (ID, flags, question echoed verbatim). */
#include "testutil.h"

#include "dnsmsg.h"
#include "policy/dnsquery.h"

/* A query for `name` (as written: case and all) of `type`, with `ar` OPT
 * records and extra trailing bytes. */
static void query(struct tu_dns *m, const char *name, unsigned type, unsigned flags, unsigned qd, unsigned an,
		  unsigned ar)
{
	m->n = 0;
	tu_put16(m, 0xbeef);
	tu_put16(m, flags);
	tu_put16(m, qd);
	tu_put16(m, an);
	tu_put16(m, 0);
	tu_put16(m, ar);
	for (unsigned i = 0; i < qd; i++) {
		tu_name(m, name);
		tu_put16(m, type);
		tu_put16(m, 1);
	}
	for (unsigned i = 0; i < an; i++) {
		tu_ptr(m, 12);
		tu_put16(m, 1);
		tu_put16(m, 1);
		tu_put32(m, 60);
		tu_put16(m, 4);
		tu_put32(m, 0x0a000001);
	}
	for (unsigned i = 0; i < ar; i++) {
		tu_put(m, "", 1); /* root */
		tu_put16(m, 41);
		tu_put16(m, 1232);
		tu_put32(m, 0);
		tu_put16(m, 0);
	}
}

static void policy(struct ng_policy *p)
{
	struct ng_name_entry s3 = {.name = "s3.example.com", .proto = 6, .p_lo = 443, .p_hi = 443};
	struct ng_name_entry wild = {
		.name = "blob.test", .wildcard = true, .proto = 6, .p_lo = 443, .p_hi = 443};
	struct ng_name_entry svc = {.name = "svc.cluster.local", .wildcard = true};

	memset(p, 0, sizeof(*p));
	p->queries_listed = true;
	p->refused_rcode = 3;
	assert_int_equal(ng_vec_push(&p->name_entries, &s3), 0);
	assert_int_equal(ng_vec_push(&p->name_entries, &wild), 0);
	assert_int_equal(ng_vec_push(&p->dns_always, &svc), 0);
}

static enum ng_dnsq_verdict judge(const struct ng_policy *p, const struct tu_dns *m, struct ng_dns_query *q)
{
	return ng_dns_query_judge(p, m->b, m->n, q);
}

static void test_listed_names(void **state)
{
	static const char *const ok[] = {"s3.example.com",  "S3.Example.COM",
					 "s3.example.com.", "a.blob.test",
					 "x.y.blob.test",   "kubernetes.default.svc.cluster.local"};
	static const char *const no[] = {
		"example.com",      "blob.test",         "s3.example.com.ns.svc.local", "xs3.example.com",
		"evil.example.net", "svc.cluster.local", "s3.example.com.evil.test"};
	struct tu_dns *m = malloc(sizeof(*m));
	struct ng_policy p;
	struct ng_dns_query q;

	(void)state;
	policy(&p);
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		query(m, ok[i], 1, 0x0100, 1, 0, 0);
		assert_int_equal(judge(&p, m, &q), NG_DNSQ_OK);
	}
	/* Any type for an allowed name: TXT, NULL, ANY, AAAA. */
	for (unsigned t = 0; t < 4; t++) {
		query(m, "s3.example.com", (unsigned[]){16, 10, 255, 28}[t], 0x0100, 1, 0, 1);
		assert_int_equal(judge(&p, m, &q), NG_DNSQ_OK);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		query(m, no[i], 1, 0x0100, 1, 0, 0);
		assert_int_equal(judge(&p, m, &q), NG_DNSQ_UNLISTED);
	}
	/* A label byte outside [a-z0-9-_] never matches: "s3\x00x" or a dot
	 * inside a label is not s3.example.com. */
	m->n = 0;
	query(m, "s3.example.com", 1, 0x0100, 1, 0, 0);
	m->b[13] = '.';
	m->b[14] = '.'; /* "s3" -> ".." inside the first label */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_UNLISTED);
	free(m);
	ng_vec_free(&p.name_entries);
	ng_vec_free(&p.dns_always);
}

static void test_shapes_refused(void **state)
{
	struct tu_dns *m = malloc(sizeof(*m));
	struct ng_policy p;
	struct ng_dns_query q;

	(void)state;
	policy(&p);
	query(m, "s3.example.com", 1, 0x0100, 2, 0, 0);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_QDCOUNT);
	query(m, "s3.example.com", 1, 0x0100, 0, 0, 0);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_QDCOUNT);
	query(m, "s3.example.com", 1, 0x2900, 1, 0, 0); /* opcode 5: UPDATE */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_OPCODE);
	query(m, "s3.example.com", 1, 0x1000, 1, 0, 0); /* opcode 2: STATUS */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_OPCODE);
	query(m, "s3.example.com", 1, 0x8180, 1, 0, 0); /* a response */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_NOT_QUERY);
	query(m, "s3.example.com", 1, 0x0100, 1, 1, 0); /* an answer record carried along */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_SECTIONS);
	query(m, "s3.example.com", 1, 0x0100, 1, 0, 2);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_SECTIONS);
	query(m, "s3.example.com", 1, 0x0100, 1, 0, 0);
	tu_put(m, "data", 4); /* bytes after the question */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_MALFORMED);
	query(m, "s3.example.com", 1, 0x0100, 1, 0, 0);
	m->b[m->n - 1] = 3; /* class CH */
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_CLASS);
	query(m, "s3.example.com", 1, 0x0100, 1, 0, 0);
	assert_int_equal(ng_dns_query_judge(&p, m->b, 11, &q), NG_DNSQ_MALFORMED);
	assert_int_equal(ng_dns_query_judge(&p, m->b, m->n - 1, &q), NG_DNSQ_MALFORMED);
	free(m);
	ng_vec_free(&p.name_entries);
	ng_vec_free(&p.dns_always);
}

static void test_refusal_bytes(void **state)
{
	struct tu_dns *m = malloc(sizeof(*m));
	uint8_t out[600];
	struct ng_policy p;
	struct ng_dns_query q;
	size_t n;

	(void)state;
	policy(&p);
	query(m, "Evil.Example.NET", 16, 0x0100, 1, 0, 1);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_UNLISTED);
	assert_string_equal(q.name, "evil.example.net");
	n = ng_dns_refusal(m->b, m->n, &q, NG_DNSQ_UNLISTED, 3, out, sizeof(out));
	assert_int_equal(n, 12 + q.q_len);
	assert_int_equal(out[0], 0xbe);
	assert_int_equal(out[1], 0xef);
	assert_int_equal(out[2], 0x81); /* QR, opcode 0, RD */
	assert_int_equal(out[3], 0x83); /* RA, NXDOMAIN */
	assert_int_equal(out[5], 1);
	assert_int_equal(out[7] | out[9] | out[11], 0);
	/* The question verbatim, its case included. */
	assert_memory_equal(out + 12, m->b + 12, q.q_len);
	n = ng_dns_refusal(m->b, m->n, &q, NG_DNSQ_UNLISTED, 5, out, sizeof(out));
	assert_int_equal(out[3], 0x85);
	/* What the answer says for other refusals. */
	query(m, "s3.example.com", 1, 0x2900, 1, 0, 0);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_OPCODE);
	n = ng_dns_refusal(m->b, m->n, &q, NG_DNSQ_OPCODE, 3, out, sizeof(out));
	assert_int_equal(out[2], 0xa9);
	assert_int_equal(out[3] & 0x0f, 4); /* NOTIMP */
	query(m, "s3.example.com", 1, 0x0100, 2, 0, 0);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_QDCOUNT);
	n = ng_dns_refusal(m->b, m->n, &q, NG_DNSQ_QDCOUNT, 3, out, sizeof(out));
	assert_int_equal(n, 12);
	assert_int_equal(out[3] & 0x0f, 1); /* FORMERR, no question */
	/* A response is never answered; a short message cannot be. */
	query(m, "s3.example.com", 1, 0x8180, 1, 0, 0);
	assert_int_equal(judge(&p, m, &q), NG_DNSQ_NOT_QUERY);
	assert_int_equal(ng_dns_refusal(m->b, m->n, &q, NG_DNSQ_NOT_QUERY, 3, out, sizeof(out)), 0);
	assert_int_equal(ng_dns_refusal(m->b, 5, &q, NG_DNSQ_MALFORMED, 3, out, sizeof(out)), 0);
	free(m);
	ng_vec_free(&p.name_entries);
	ng_vec_free(&p.dns_always);
}

static void test_name_short(void **state)
{
	char out[64];

	(void)state;
	ng_dns_name_short("s3.example.com", 40, out, sizeof(out));
	assert_string_equal(out, "s3.example.com");
	ng_dns_name_short("mzxw6ytboi2dembrgq3dmnzygk4tembrgi3dgnbv.attacker.test", 20, out, sizeof(out));
	assert_string_equal(out, "mzxw6ytboi2dembrg...");
	assert_int_equal(strlen(out), 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listed_names),
		cmocka_unit_test(test_shapes_refused),
		cmocka_unit_test(test_refusal_bytes),
		cmocka_unit_test(test_name_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
