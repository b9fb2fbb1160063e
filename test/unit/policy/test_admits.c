/* Which live flows a pod's policy still admits (policy/admits.h): what a
 * re-plan of a running pod cuts is exactly what the new policy refuses;
 * a flow it admits is never cut. */
#include "testutil.h"

#include "policy/admits.h"
#include "policy/annotations.h"
#include "policy/policy.h"
#include "spec/prevresult.h"

#define PREV                                                                                             \
	"{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\"}," \
	"{\"address\":\"fd00:244:1::5/64\",\"gateway\":\"fd00:244:1::1\"}],"                             \
	"\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"e2:1f:70:28:c5:85\",\"sandbox\":\"/run/netns/p\"}]}"

/* BASE_CONF with `key` = `value` (JSON; NULL: as it is), names learned
 * (egress.names "learn": what a re-plan carries is exact) unless `resolve`,
 * compiled for pod 10.244.1.5 / fd00:244:1::5 without names asked, grants
 * `egress`. */
static void compile_as(struct ng_policy *p, bool resolve, const char *key, const char *value,
		       const char *egress)
{
	struct ng_err err = {0};
	json_t *root = key ? tu_conf_with(key, value) : tu_json(BASE_CONF), *prevj = tu_json(PREV);
	struct ng_config cfg;
	struct ng_annotations ann;
	struct ng_prev prev;

	if (!resolve)
		json_object_set_new(json_object_get(root, "egress"), "names", json_string("learn"));
	if (egress)
		json_object_set_new(root, "runtimeConfig",
				    json_pack("{s:{s:s}}", "io.kubernetes.cri.pod-annotations",
					      "netguard.boxxkite.io/egress", egress));
	if (ng_config_parse(root, &cfg, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(ng_annotations_parse(root, &cfg, &ann, &err), 0);
	assert_int_equal(ng_prev_parse(prevj, &prev, &err), 0);
	assert_int_equal(ng_policy_compile(&cfg, &ann, &prev, NULL, NULL, p, &err), 0);
	ng_prev_free(&prev);
	ng_annotations_free(&ann);
	ng_config_free(&cfg);
	json_decref(root);
	json_decref(prevj);
}

static void compile(struct ng_policy *p, const char *key, const char *value, const char *egress)
{
	compile_as(p, false, key, value, egress);
}

static bool admits(const struct ng_policy *p, const char *src, const char *dst, uint8_t proto, uint16_t port)
{
	struct ng_flow f = {.proto = proto, .dport = port};

	assert_int_equal(ng_ip_parse(src, &f.src), 0);
	assert_int_equal(ng_ip_parse(dst, &f.dst), 0);
	return ng_policy_admits(p, &f);
}

#define POD4 "10.244.1.5"
#define POD6 "fd00:244:1::5"

static void test_outbound(void **state)
{
	struct ng_policy p;

	(void)state;
	compile(&p, NULL, NULL, "10.1.2.3:443");
	/* egress.allow (10.20.0.0/16:443), the grant, the DNS servers */
	assert_true(admits(&p, POD4, "10.20.9.9", NG_PROTO_TCP, 443));
	assert_false(admits(&p, POD4, "10.20.9.9", NG_PROTO_TCP, 444));
	assert_false(admits(&p, POD4, "10.20.9.9", NG_PROTO_UDP, 443));
	assert_true(admits(&p, POD4, "10.1.2.3", NG_PROTO_TCP, 443));
	assert_true(admits(&p, POD4, "10.96.0.10", NG_PROTO_UDP, 53));
	assert_true(admits(&p, POD6, "fd00:10:96::a", NG_PROTO_TCP, 53));
	assert_false(admits(&p, POD4, "10.96.0.10", NG_PROTO_TCP, 80));
	/* anything else, and cloud metadata */
	assert_false(admits(&p, POD4, "10.50.0.9", NG_PROTO_TCP, 443));
	assert_false(admits(&p, POD4, "169.254.169.254", NG_PROTO_TCP, 80));
	/* the pod's own loopback, and the pod to itself */
	assert_true(admits(&p, "127.0.0.1", "127.0.0.1", NG_PROTO_TCP, 9));
	assert_true(admits(&p, "::1", "::1", NG_PROTO_UDP, 9));
	assert_true(admits(&p, POD4, POD4, NG_PROTO_TCP, 9999));
	ng_policy_free(&p);
}

static void test_learned_carried(void **state)
{
	struct ng_policy p;
	struct ng_elem e = {.proto = NG_PROTO_TCP, .p_lo = 443, .p_hi = 443, .timeout = 100};

	(void)state;
	compile(&p, NULL, NULL, NULL);
	assert_false(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 443));
	/* what the re-plan carried into the new tables (ng_podlock_learned) */
	assert_int_equal(ng_ip_parse("10.70.0.1", &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(ng_vec_push(&p.learned[0][0], &e), 0);
	assert_true(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 443));
	assert_false(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 8443));
	assert_false(admits(&p, POD4, "10.70.0.2", NG_PROTO_TCP, 443));
	/* a ranged one */
	e.p_lo = 5000;
	e.p_hi = 6000;
	e.proto = NG_PROTO_UDP;
	assert_int_equal(ng_vec_push(&p.learned[1][0], &e), 0);
	assert_true(admits(&p, POD4, "10.70.0.1", NG_PROTO_UDP, 5500));
	ng_policy_free(&p);
}

static void test_inbound(void **state)
{
	struct ng_policy p;

	(void)state;
	compile(&p, NULL, NULL, NULL);
	/* ingress.sources (10.244.0.0/16) to ingress.ports (8080), TCP */
	assert_true(admits(&p, "10.244.7.7", POD4, NG_PROTO_TCP, 8080));
	assert_false(admits(&p, "10.244.7.7", POD4, NG_PROTO_TCP, 8081));
	assert_false(admits(&p, "10.99.0.2", POD4, NG_PROTO_TCP, 8080));
	assert_false(admits(&p, "10.244.7.7", POD4, NG_PROTO_UDP, 8080));
	/* allowNode: the gateway, any TCP port */
	assert_true(admits(&p, "10.244.1.1", POD4, NG_PROTO_TCP, 10250));
	assert_true(admits(&p, "fd00:244:1::1", POD6, NG_PROTO_TCP, 1));
	ng_policy_free(&p);
	compile(&p, "ingress", "{\"ports\":[8080],\"sources\":[\"10.99.0.0/24\"]}", NULL);
	assert_false(admits(&p, "10.244.7.7", POD4, NG_PROTO_TCP, 8080));
	assert_true(admits(&p, "10.99.0.2", POD4, NG_PROTO_TCP, 8080));
	assert_false(admits(&p, "10.244.1.1", POD4, NG_PROTO_TCP, 10250));
	ng_policy_free(&p);
}

/* egress.names "resolve": the names' addresses as the re-plan resolved them. */
static void test_resolved_names(void **state)
{
	struct ng_policy p;
	struct ng_elem e = {.proto = NG_PROTO_TCP, .p_lo = 443, .p_hi = 443};

	(void)state;
	compile_as(&p, true, NULL, NULL, NULL); /* s3.example.com:443, nothing resolved */
	assert_false(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 443));
	assert_int_equal(ng_ip_parse("10.70.0.1", &e.lo), 0);
	e.hi = e.lo;
	assert_int_equal(ng_vec_push(&p.names[0], &e), 0);
	assert_true(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 443));
	assert_false(admits(&p, POD4, "10.70.0.1", NG_PROTO_TCP, 8443));
	assert_false(admits(&p, POD4, "10.70.0.2", NG_PROTO_TCP, 443));
	ng_policy_free(&p);
}

static void test_audit(void **state)
{
	struct ng_policy p;

	(void)state;
	compile(&p, NULL, NULL, NULL);
	p.audit = true; /* as ng_pod_policy_build marks an audited pod's */
	assert_true(admits(&p, POD4, "10.50.0.9", NG_PROTO_TCP, 443));
	assert_true(admits(&p, "10.99.0.2", POD4, NG_PROTO_TCP, 22));
	/* metadata refused in every mode */
	assert_false(admits(&p, POD4, "169.254.169.254", NG_PROTO_TCP, 80));
	assert_false(admits(&p, POD6, "fd00:ec2::254", NG_PROTO_TCP, 80));
	ng_policy_free(&p);
}

/* Nothing to cut (no conntrack dump) only when the new policy admits all the
 * old one did. */
static bool covers(const char *old_key, const char *old_val, const char *now_key, const char *now_val,
		   const char *old_grants, const char *now_grants)
{
	struct ng_policy old, now;
	bool c;

	compile(&old, old_key, old_val, old_grants);
	compile(&now, now_key, now_val, now_grants);
	c = ng_policy_covers(&now, &old);
	ng_policy_free(&old);
	ng_policy_free(&now);
	return c;
}

#define EGRESS(allow) "{\"allow\":" allow ",\"envelope\":[\"10.0.0.0/8:443\",\"*.example.com:443\"]}"

static void test_covers(void **state)
{
	struct ng_policy a, b;

	(void)state;
	assert_true(covers(NULL, NULL, NULL, NULL, NULL, NULL));
	/* an entry more: covered; one less, or narrower: not */
	assert_true(covers("egress", EGRESS("[\"10.20.0.0/16:443\"]"), "egress",
			   EGRESS("[\"10.20.0.0/16:443\",\"10.30.0.1:443\"]"), NULL, NULL));
	assert_false(covers("egress", EGRESS("[\"10.20.0.0/16:443\",\"10.30.0.1:443\"]"), "egress",
			    EGRESS("[\"10.20.0.0/16:443\"]"), NULL, NULL));
	assert_false(covers("egress", EGRESS("[\"10.20.0.0/16:443\"]"), "egress",
			    EGRESS("[\"10.20.1.0/24:443\"]"), NULL, NULL));
	assert_true(covers("egress", EGRESS("[\"10.20.1.0/24:443\"]"), "egress",
			   EGRESS("[\"10.20.0.0/16:443\"]"), NULL, NULL));
	/* grants: one withdrawn, one added */
	assert_false(covers(NULL, NULL, NULL, NULL, "10.1.2.3:443", NULL));
	assert_true(covers(NULL, NULL, NULL, NULL, NULL, "10.1.2.3:443"));
	/* a name entry withdrawn whose protocol and port no other covers */
	assert_false(covers("egress", EGRESS("[\"a.example.com:443\"]"), "egress", EGRESS("[]"), NULL, NULL));
	/* resolvers, ingress sources, the node */
	assert_false(covers("dns", "{\"servers\":[\"10.96.0.10\",\"10.96.0.11\"]}", "dns",
			    "{\"servers\":[\"10.96.0.10\"]}", NULL, NULL));
	assert_false(covers(NULL, NULL, "ingress", "{\"ports\":[8080],\"sources\":[\"10.244.0.0/16\"]}", NULL,
			    NULL)); /* allowNode dropped */
	assert_false(covers(NULL, NULL, "ingress",
			    "{\"ports\":[8081],\"sources\":[\"10.244.0.0/16\"],"
			    "\"allowNode\":true}",
			    NULL, NULL));
	/* a metadata address more refused */
	assert_false(covers(NULL, NULL, "metadata", "{\"extra\":[\"10.50.9.9\"]}", NULL, NULL));
	/* names resolved again may have moved: always looked for */
	{
		struct ng_policy o, n;

		compile_as(&o, true, NULL, NULL, NULL);
		compile_as(&n, true, NULL, NULL, NULL);
		assert_false(ng_policy_covers(&n, &o));
		ng_policy_free(&o);
		ng_policy_free(&n);
	}
	/* audit: to enforce is narrower, to audit never */
	compile(&a, NULL, NULL, NULL);
	compile(&b, NULL, NULL, NULL);
	a.audit = true;
	assert_false(ng_policy_covers(&b, &a));
	assert_true(ng_policy_covers(&a, &b));
	ng_policy_free(&a);
	ng_policy_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outbound), cmocka_unit_test(test_learned_carried),
		cmocka_unit_test(test_inbound),  cmocka_unit_test(test_resolved_names),
		cmocka_unit_test(test_audit),    cmocka_unit_test(test_covers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
