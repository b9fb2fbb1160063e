/* The answer parser (hostile messages) and the learner (what an answer
 * teaches a pod, for which entry, for how long). */
#include "testutil.h"

#include "dnsmsg.h"

#include "spec/prevresult.h"
#include "policy/annotations.h"
#include "policy/dnsparse.h"
#include "policy/learn.h"
#include "policy/policy.h"

/* ---- a message builder ------------------------------------------------------- */

/* Header and question; the question name is at offset 12. */
static void head(struct tu_dns *m, const char *q, unsigned ancount)
{
	m->n = 0;
	tu_put16(m, 0x4242);
	tu_put16(m, 0x8180);
	tu_put16(m, 1);
	tu_put16(m, ancount);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, q);
	tu_put16(m, 1);
	tu_put16(m, 1);
}
static void rr_a(struct tu_dns *m, size_t owner, uint32_t ttl, const char *ip4)
{
	struct ng_ip ip;

	tu_ptr(m, owner);
	tu_put16(m, 1);
	tu_put16(m, 1);
	tu_put32(m, ttl);
	tu_put16(m, 4);
	ng_ip_parse(ip4, &ip);
	tu_put(m, ip.a, 4);
}
static void rr_aaaa(struct tu_dns *m, size_t owner, uint32_t ttl, const char *ip6)
{
	struct ng_ip ip;

	tu_ptr(m, owner);
	tu_put16(m, 28);
	tu_put16(m, 1);
	tu_put32(m, ttl);
	tu_put16(m, 16);
	ng_ip_parse(ip6, &ip);
	tu_put(m, ip.a, 16);
}
/* A CNAME whose target is written out at this point; returns its offset. */
static size_t rr_cname(struct tu_dns *m, size_t owner, uint32_t ttl, const char *target)
{
	size_t len_at, at;

	tu_ptr(m, owner);
	tu_put16(m, 5);
	tu_put16(m, 1);
	tu_put32(m, ttl);
	len_at = m->n;
	tu_put16(m, 0);
	at = tu_name(m, target);
	m->b[len_at] = (uint8_t)((m->n - at) >> 8);
	m->b[len_at + 1] = (uint8_t)(m->n - at);
	return at;
}

static struct ng_dns_msg *msg;

static int setup(void **state)
{
	(void)state;
	msg = malloc(sizeof(*msg));
	return msg ? 0 : -1;
}
static int teardown(void **state)
{
	(void)state;
	free(msg);
	return 0;
}

/* ---- parser ------------------------------------------------------------------ */

static void test_case_and_trailing_dot(void **state)
{
	(void)state;
	struct tu_dns m;

	head(&m, "S3.Example.COM", 1);
	rr_a(&m, 12, 60, "10.50.0.1");
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), 0);
	assert_string_equal(msg->names[0], "s3.example.com"); /* lowercase, no trailing dot */
	assert_int_equal(msg->n_rrs, 1);
	assert_string_equal(msg->names[msg->rrs[0].owner], "s3.example.com");
}

static void test_compression_loop_refused(void **state)
{
	(void)state;
	struct tu_dns m;

	/* An answer owner that points at itself, and one that points forward. */
	head(&m, "a.example.com", 1);
	size_t at = m.n;
	tu_ptr(&m, at);
	tu_put16(&m, 1), tu_put16(&m, 1), tu_put32(&m, 1), tu_put16(&m, 4), tu_put32(&m, 0x0a000001);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);

	head(&m, "a.example.com", 1);
	tu_ptr(&m, m.n + 2); /* forward: to the bytes just after this pointer */
	tu_name(&m, "x.example.com");
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);

	/* A two-pointer loop: label, pointer back to it, and again. */
	head(&m, "a.example.com", 1);
	size_t l = m.n;
	tu_put(&m, "\x01x", 2);
	tu_ptr(&m, l);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);

	/* Into the header. */
	head(&m, "a.example.com", 1);
	tu_ptr(&m, 2);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);
}

static void test_truncated_everywhere(void **state)
{
	(void)state;
	struct tu_dns m;

	head(&m, "files.example.com", 2);
	size_t t = rr_cname(&m, 12, 300, "blob.cdn.example.net");
	rr_a(&m, t, 60, "10.50.0.2");
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), 0);
	for (size_t cut = 0; cut < m.n; cut++)
		assert_int_equal(ng_dns_parse(m.b, cut, msg), -1);
}

static void test_oversize_and_caps(void **state)
{
	(void)state;
	struct tu_dns m;
	char longname[400];

	/* A name over 255 wire bytes: malformed. */
	memset(longname, 0, sizeof(longname));
	for (int i = 0; i < 5; i++)
		strcat(longname, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.");
	strcat(longname, "com");
	head(&m, longname, 0);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);
	/* More than NG_DNS_MAX_RRS records: the first ones kept, capped. */
	head(&m, "many.example.com", 300);
	for (int i = 0; i < 300; i++)
		rr_a(&m, 12, 60, "10.50.0.3");
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), 0);
	assert_true(msg->capped);
	assert_int_equal(msg->n_rrs, NG_DNS_MAX_RRS);
	/* Longer than a DNS message can be. */
	assert_int_equal(ng_dns_parse(m.b, 65536, msg), -1);
	/* Two questions, or none: not an answer to one question. */
	head(&m, "a.example.com", 0);
	m.b[5] = 2;
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);
	m.b[5] = 0;
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);
	/* A record with 5 bytes of A rdata. */
	head(&m, "a.example.com", 1);
	tu_ptr(&m, 12);
	tu_put16(&m, 1), tu_put16(&m, 1), tu_put32(&m, 1), tu_put16(&m, 5), tu_put32(&m, 0x0a000001);
	tu_put(&m, "x", 1);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), -1);
}

static void test_odd_label_bytes(void **state)
{
	(void)state;
	struct tu_dns m;

	/* One label "x.storage" (a dot inside a label) is not two labels. */
	head(&m, "q.example.com", 0);
	m.n = 12;
	tu_put(&m,
	       "\x09x.storage\x07"
	       "example\x03"
	       "com\x00",
	       23);
	tu_put16(&m, 1), tu_put16(&m, 1);
	assert_int_equal(ng_dns_parse(m.b, m.n, msg), 0);
	assert_string_equal(msg->names[0], "x?storage.example.com");
}

/* ---- the learner ----------------------------------------------------------- */

#define PREV "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\"}]}"

/* A learn-mode policy with these allow entries (JSON array text). */
static void policy_with(const char *allow, unsigned min_ttl, struct ng_policy *pol)
{
	char egress[1024];
	struct ng_config cfg;
	struct ng_annotations ann = {0};
	struct ng_prev prev = {0};
	struct ng_err err = {0};
	json_t *root, *pj = tu_json(PREV);

	snprintf(egress, sizeof(egress), "{\"names\":\"learn\",\"minNameTTL\":%u,\"allow\":%s}", min_ttl,
		 allow);
	root = tu_conf_with("egress", egress);
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(ng_prev_parse(pj, &prev, &err), 0);
	assert_int_equal(ng_policy_compile(&cfg, &ann, &prev, NULL, NULL, pol, &err), 0);
	assert_true(pol->learn);
	ng_prev_free(&prev);
	ng_config_free(&cfg);
	json_decref(root);
	json_decref(pj);
}

static bool has(const ng_elem_vec *v, const char *ip, uint16_t lo, uint16_t hi, uint32_t timeout)
{
	struct ng_ip want;

	ng_ip_parse(ip, &want);
	for (size_t i = 0; i < v->n; i++)
		if (ng_ip_eq(&v->v[i].lo, &want) && v->v[i].p_lo == lo && v->v[i].p_hi == hi &&
		    (!timeout || v->v[i].timeout == timeout))
			return true;
	return false;
}

static void learn(const struct ng_policy *pol, struct tu_dns *m, struct ng_learn_result *r)
{
	assert_int_equal(ng_dns_parse(m->b, m->n, msg), 0);
	assert_int_equal(ng_learn(pol, msg, r), 0);
}

static void test_learn_name_and_wildcard(void **state)
{
	(void)state;
	struct ng_policy pol;
	struct ng_learn_result r = {0};
	struct tu_dns m;

	policy_with("[\"s3.example.com:443\",\"*.cdn.example.net:8443\"]", 60, &pol);
	head(&m, "S3.EXAMPLE.com", 1);
	rr_a(&m, 12, 5, "10.50.0.1");
	learn(&pol, &m, &r);
	assert_true(has(&r.single[0], "10.50.0.1", 443, 443, 60)); /* TTL 5 raised to the floor */
	assert_int_equal(r.single[0].n, 1);

	/* Wildcards match one or more whole labels, never the suffix itself
	 * nor a longer last label. */
	const char *yes[] = {"a.cdn.example.net", "x.y.cdn.example.net"};
	const char *no[] = {"cdn.example.net", "acdn.example.net", "a.cdn.example.net.evil.org",
			    "example.net"};
	for (size_t i = 0; i < 2; i++) {
		head(&m, yes[i], 1);
		rr_a(&m, 12, 60, "10.50.0.2");
		learn(&pol, &m, &r);
		assert_true(has(&r.single[0], "10.50.0.2", 8443, 8443, 0));
	}
	for (size_t i = 0; i < 4; i++) {
		head(&m, no[i], 1);
		rr_a(&m, 12, 60, "10.50.0.2");
		learn(&pol, &m, &r);
		assert_int_equal(r.single[0].n + r.ranges[0].n, 0);
	}
	ng_learn_result_free(&r);
	ng_policy_free(&pol);
}

static void test_learn_cname_chains(void **state)
{
	(void)state;
	struct ng_policy pol;
	struct ng_learn_result r = {0};
	struct tu_dns m;

	policy_with("[\"files.example.com:443\"]", 30, &pol);
	/* files -> blob.cdn (TTL 40) -> A (TTL 3600): the chain's smallest TTL. */
	head(&m, "files.example.com", 3);
	size_t t = rr_cname(&m, 12, 40, "blob.cdn.example.net");
	rr_a(&m, t, 3600, "10.50.0.3");
	rr_a(&m, 12, 100, "10.50.0.4"); /* an address of the question itself */
	learn(&pol, &m, &r);
	assert_true(has(&r.single[0], "10.50.0.3", 443, 443, 40));
	assert_true(has(&r.single[0], "10.50.0.4", 443, 443, 100));

	/* A CNAME loop: a -> b -> a; addresses of both still on the chain. */
	head(&m, "files.example.com", 3);
	size_t b = rr_cname(&m, 12, 60, "b.example.org");
	rr_cname(&m, b, 60, "files.example.com");
	rr_a(&m, b, 60, "10.50.0.5");
	learn(&pol, &m, &r);
	assert_true(has(&r.single[0], "10.50.0.5", 443, 443, 0));

	/* Asked for a name of the pod's own choosing, aliased to the allowed
	 * one: the allowed name's addresses are learned, never those the
	 * answer gives the question itself nor those of a sibling branch
	 * (a name whose authority the pod controls can say anything of itself). */
	head(&m, "evil.example.org", 5);
	size_t f = rr_cname(&m, 12, 60, "files.example.com");
	rr_a(&m, 12, 60, "10.66.0.1");
	size_t o = rr_cname(&m, 12, 60, "other.example.org");
	rr_a(&m, o, 60, "10.66.0.2");
	rr_a(&m, f, 60, "10.50.0.9");
	learn(&pol, &m, &r);
	assert_true(has(&r.single[0], "10.50.0.9", 443, 443, 0));
	assert_int_equal(r.single[0].n, 1);
	/* ... and an alias two links away: evil -> mid -> files -> blob. */
	head(&m, "evil.example.org", 5);
	size_t mid = rr_cname(&m, 12, 60, "mid.example.org");
	f = rr_cname(&m, mid, 60, "files.example.com");
	size_t bl = rr_cname(&m, f, 60, "blob.cdn.example.net");
	rr_a(&m, mid, 60, "10.66.0.3");
	rr_a(&m, bl, 60, "10.50.0.10");
	learn(&pol, &m, &r);
	assert_true(has(&r.single[0], "10.50.0.10", 443, 443, 0));
	assert_int_equal(r.single[0].n, 1);

	/* A chain longer than NG_DNS_MAX_CHAIN: the far end is not followed. */
	head(&m, "files.example.com", NG_DNS_MAX_CHAIN + 2);
	size_t owner = 12;
	for (int i = 0; i <= NG_DNS_MAX_CHAIN; i++) {
		char n[32];

		snprintf(n, sizeof(n), "c%d.example.org", i);
		owner = rr_cname(&m, owner, 60, n);
	}
	rr_a(&m, owner, 60, "10.50.0.6");
	learn(&pol, &m, &r);
	assert_int_equal(r.single[0].n, 0);
	ng_learn_result_free(&r);
	ng_policy_free(&pol);
}

static void test_learn_other_question_and_metadata(void **state)
{
	(void)state;
	struct ng_policy pol;
	struct ng_learn_result r = {0};
	struct tu_dns m;

	policy_with("[\"s3.example.com:443\",\"*.evil.example.org:443\"]", 30, &pol);
	/* Asked for other.example.org; the answer smuggles an A for s3. */
	head(&m, "other.example.org", 1);
	size_t s3 = m.n;
	tu_ptr(&m, 0); /* placeholder, replaced below */
	m.n = s3;
	tu_name(&m, "s3.example.com");
	tu_put16(&m, 1), tu_put16(&m, 1), tu_put32(&m, 60), tu_put16(&m, 4), tu_put32(&m, 0x0a320007);
	learn(&pol, &m, &r);
	assert_int_equal(r.single[0].n, 0);
	/* A matching name answered with the metadata address: never learned. */
	head(&m, "x.evil.example.org", 2);
	rr_a(&m, 12, 60, "169.254.169.254");
	rr_a(&m, 12, 60, "10.50.0.8");
	learn(&pol, &m, &r);
	assert_int_equal(r.metadata, 1);
	assert_int_equal(r.single[0].n, 1);
	assert_true(has(&r.single[0], "10.50.0.8", 443, 443, 0));
	/* IPv6 forms of 169.254.169.254 with free bits set (6to4 with a subnet
	 * and host, a NAT64 local prefix, ISATAP under any /64, Teredo): never
	 * learned either; an ordinary address beside them is. */
	const char *forms[] = {"2002:a9fe:a9fe:1::1", "64:ff9b:1::a9fe:a9fe", "2001:db8:9::5efe:a9fe:a9fe",
			       "2001:0:4136:e378:8000:63bf:5601:5601"};
	head(&m, "x.evil.example.org", 5);
	for (size_t i = 0; i < 4; i++)
		rr_aaaa(&m, 12, 60, forms[i]);
	rr_aaaa(&m, 12, 60, "2001:db8:50::8");
	learn(&pol, &m, &r);
	assert_int_equal(r.metadata, 4);
	assert_int_equal(r.single[1].n, 1);
	assert_true(has(&r.single[1], "2001:db8:50::8", 443, 443, 0));
	ng_learn_result_free(&r);
	ng_policy_free(&pol);
}

static void test_learn_port_pieces_and_cap(void **state)
{
	(void)state;
	struct ng_policy pol;
	struct ng_learn_result r = {0};
	struct tu_dns m;

	/* tcp 400-500 and tcp 443 overlap: cut into 400-442, 443, 444-500. */
	policy_with("[\"a.example.com:400-500\",\"b.example.com:443\"]", 30, &pol);
	assert_int_equal(pol.name_pieces.n, 3);
	head(&m, "a.example.com", 1);
	rr_a(&m, 12, 10000000, "10.50.0.9");
	learn(&pol, &m, &r);
	assert_true(has(&r.ranges[0], "10.50.0.9", 400, 442, NG_LEARN_TTL_CAP)); /* capped at a day */
	assert_true(has(&r.single[0], "10.50.0.9", 443, 443, 0));
	assert_true(has(&r.ranges[0], "10.50.0.9", 444, 500, 0));
	head(&m, "b.example.com", 1);
	rr_a(&m, 12, 60, "10.50.0.9");
	learn(&pol, &m, &r);
	assert_int_equal(r.ranges[0].n, 0);
	assert_true(has(&r.single[0], "10.50.0.9", 443, 443, 60));
	ng_learn_result_free(&r);
	ng_policy_free(&pol);
	/* A minNameTTL above the cap is the lifetime. */
	policy_with("[\"a.example.com:443\"]", 604800, &pol);
	assert_int_equal(ng_learn_lifetime(&pol, 5), 604800);
	ng_policy_free(&pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_case_and_trailing_dot),
		cmocka_unit_test(test_compression_loop_refused),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_oversize_and_caps),
		cmocka_unit_test(test_odd_label_bytes),
		cmocka_unit_test(test_learn_name_and_wildcard),
		cmocka_unit_test(test_learn_cname_chains),
		cmocka_unit_test(test_learn_other_question_and_metadata),
		cmocka_unit_test(test_learn_port_pieces_and_cap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
