/* A grant change, the pure half (agent/grantplan.h, state/recgrants.h):
 * the recorded stdin with the API's annotation goes through the one path of
 * ADD (state/recpolicy.h), so its refusals are ADD's; what a withdrawal
 * removes and which live flows it cuts. */
#include "testutil.h"

#include "agent/grantplan.h"
#include "policy/admits.h"
#include "state/recgrants.h"
#include "state/recpolicy.h"

#define EGRESS "netguard.boxxkite.io/egress"

/* A record as ADD writes it for pod sandboxes/w1 with `egress` granted
 * (NULL: no grant annotation). */
static void record(struct ng_record *r, const char *egress)
{
	struct ng_err err = {0};
	json_t *prev = tu_json(
		"{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],"
		"\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\",\"interface\":0}]}");

	memset(r, 0, sizeof(*r));
	assert_int_equal(ng_podref_set(&r->pod, "sandboxes", "w1", "abc123", "eth0", "/run/netns/x", &err),
			 0);
	snprintf(r->key, sizeof(r->key), "abc123@eth0");
	snprintf(r->decision, sizeof(r->decision), "enforced");
	r->have_link = true;
	r->link.ifindex = 2;
	r->conf = tu_json(BASE_CONF);
	json_object_set_new(r->conf, "prevResult", prev);
	json_object_set_new(r->conf, "runtimeConfig", json_pack("{s:{}}", NG_CRI_ANNOTATIONS));
	assert_int_equal(ng_recgrants_set(r->conf, egress), 0);
}

static void test_recorded_annotation(void **state)
{
	struct ng_record r;
	json_t *c;

	(void)state;
	record(&r, "10.1.2.3:443");
	assert_string_equal(ng_recgrants_get(r.conf), "10.1.2.3:443");
	c = ng_recgrants_with(r.conf, NULL);
	assert_null(ng_recgrants_get(c));
	/* the copy is a copy: the record keeps its own */
	assert_string_equal(ng_recgrants_get(r.conf), "10.1.2.3:443");
	json_decref(c);
	/* a stdin without runtimeConfig (the runtime passed no annotations) */
	c = tu_json("{\"type\":\"boxxkite-netguard\"}");
	assert_null(ng_recgrants_get(c));
	assert_int_equal(ng_recgrants_set(c, NULL), 0);
	assert_null(json_object_get(c, "runtimeConfig"));
	assert_int_equal(ng_recgrants_set(c, "10.9.9.9:443"), 0);
	assert_string_equal(ng_recgrants_get(c), "10.9.9.9:443");
	json_decref(c);
	ng_record_free(&r);
	assert_true(ng_grantplan_same(NULL, NULL));
	assert_false(ng_grantplan_same("a", NULL));
	assert_false(ng_grantplan_same(NULL, ""));
	assert_true(ng_grantplan_same("a,b", "a,b"));
}

/* The API's value through ADD's own validation: the same codes. */
static void replan(const char *egress, int want, int code)
{
	struct ng_record r;
	struct ng_recpolicy rp;
	struct ng_err err = {0};
	json_t *old;

	record(&r, "10.1.2.3:443");
	old = r.conf;
	r.conf = ng_recgrants_with(old, egress);
	json_decref(old);
	assert_int_equal(ng_recpolicy_build(&r, NULL, NULL, &rp, &err), want);
	if (want < 0)
		assert_int_equal(err.code, code);
	ng_recpolicy_free(&rp);
	ng_record_free(&r);
}

static void test_replan_as_add(void **state)
{
	(void)state;
	replan("10.50.0.9:443", 0, 0);
	replan(NULL, 0, 0);
	replan("10.50.0.9:443,api.example.com:443", 0, 0);
	replan("10.50.0.9:8443", -1, NG_E_ENVELOPE);  /* port outside */
	replan("192.168.1.1:443", -1, NG_E_ENVELOPE); /* address outside */
	replan("evil.test:443", -1, NG_E_ENVELOPE);   /* name outside */
	replan("0.0.0.0/0:443", -1, NG_E_ENVELOPE);   /* never widened */
	replan("10.50.0.9", -1, NG_E_ANNOTATION);     /* no port */
	replan("tcp://10.50.0.9:443,,", -1, NG_E_ANNOTATION);
}

/* (names learned: what a re-plan carries of them is exact, policy/admits.h) */
static void grants_of(const char *egress, struct ng_recpolicy *rp)
{
	struct ng_record r;
	struct ng_err err = {0};

	record(&r, egress);
	json_object_set_new(json_object_get(r.conf, "egress"), "names", json_string("learn"));
	assert_int_equal(ng_recpolicy_build(&r, NULL, NULL, rp, &err), 0);
	ng_record_free(&r);
}

/* Does the pod's new policy cut a live flow from the pod (10.244.1.5) to
 * ip:port? (policy/admits.h: what any re-plan cuts.) */
static bool cuts(const struct ng_policy *now, const char *ip, uint8_t proto, uint16_t port)
{
	struct ng_flow f = {.proto = proto, .dport = port};

	assert_int_equal(ng_ip_parse("10.244.1.5", &f.src), 0);
	assert_int_equal(ng_ip_parse(ip, &f.dst), 0);
	return !ng_policy_admits(now, &f);
}

static void test_withdrawal_cuts(void **state)
{
	struct ng_recpolicy old, now;
	ng_dest_vec removed = {0};
	const struct ng_policy *p;
	char list[256];

	(void)state;
	grants_of("10.50.0.0/24:443,10.60.0.9:443,api.example.com:443", &old);
	grants_of("10.60.0.9:443", &now);
	p = &now.pp.policy;
	assert_int_equal(ng_grantplan_removed(&old.pp.ann.grants, &now.pp.ann.grants, &removed), 0);
	ng_grantplan_list(&removed, list, sizeof(list));
	assert_string_equal(list, "10.50.0.0/24:443, api.example.com:443");
	/* the withdrawn CIDR's flows */
	assert_true(cuts(p, "10.50.0.77", NG_PROTO_TCP, 443));
	/* ... and whatever else the new policy does not admit */
	assert_true(cuts(p, "10.50.0.77", NG_PROTO_UDP, 443));
	/* still granted, or allowed by the platform (egress.allow 10.20.0.0/16:443) */
	assert_false(cuts(p, "10.60.0.9", NG_PROTO_TCP, 443));
	assert_false(cuts(p, "10.20.3.4", NG_PROTO_TCP, 443));
	assert_true(cuts(p, "10.20.3.4", NG_PROTO_TCP, 444));
	/* a name grant's addresses are learned: none carried here */
	assert_true(cuts(p, "10.70.0.1", NG_PROTO_TCP, 443));
	/* DNS to the servers is never cut, nor the pod's loopback */
	assert_false(cuts(p, "10.96.0.10", NG_PROTO_UDP, 53));
	assert_false(cuts(p, "10.96.0.10", NG_PROTO_TCP, 53));
	assert_false(cuts(p, "127.0.0.1", NG_PROTO_TCP, 9));
	ng_vec_free(&removed);
	/* nothing withdrawn: a grant kept under a wider one */
	ng_recpolicy_free(&now);
	grants_of("10.50.0.0/16:443,10.60.0.9:443,api.example.com:443", &now);
	assert_int_equal(ng_grantplan_removed(&old.pp.ann.grants, &now.pp.ann.grants, &removed), 0);
	assert_int_equal(removed.n, 0);
	ng_grantplan_list(&removed, list, sizeof(list));
	assert_string_equal(list, "none");
	ng_vec_free(&removed);
	ng_recpolicy_free(&now);
	ng_recpolicy_free(&old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_annotation),
		cmocka_unit_test(test_replan_as_add),
		cmocka_unit_test(test_withdrawal_cuts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
