/* A running pod planned again from a new plugin entry (state/liveplan.h),
 * the pure half of live policy: the recorded stdin with the new entry in
 * place of the old one and the pod's own keys kept, through the one path
 * of ADD; grants the new envelope no longer covers dropped (never kept
 * past it); a pod never selected less than it runs; the record's tables
 * those of the new policy. */
#include "testutil.h"

#include <linux/netfilter.h>

#include "state/liveplan.h"
#include "state/policygen.h"
#include "state/recgrants.h"

#define PREV                                                                                           \
	"{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}]," \
	"\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\",\"interface\":0}]}"

/* A record as ADD writes it for pod NS/w1 under BASE_CONF (changed by
 * `key` = `value` when given), with annotations `ann` (JSON). */
static void record(struct ng_record *r, const char *ns, const char *ann, bool audit)
{
	struct ng_err err = {0};

	memset(r, 0, sizeof(*r));
	assert_int_equal(ng_podref_set(&r->pod, ns, "w1", "abc123", "eth0", "/run/netns/x", &err), 0);
	snprintf(r->key, sizeof(r->key), "abc123@eth0");
	snprintf(r->decision, sizeof(r->decision), "enforced");
	snprintf(r->nonce, sizeof(r->nonce), "00112233445566778899aabbccddeeff");
	r->audit = audit;
	r->generation = 4;
	r->have_link = true;
	r->link.ifindex = 2;
	r->conf = tu_json(BASE_CONF);
	json_object_set_new(r->conf, "prevResult", tu_json(PREV));
	json_object_set_new(r->conf, "runtimeConfig", json_pack("{s:o}", NG_CRI_ANNOTATIONS, tu_json(ann)));
}

/* BASE_CONF's entry with one key replaced (JSON text) or removed (NULL). */
static json_t *entry(const char *key, const char *value)
{
	json_t *c = tu_conf_with(key, value), *e = ng_entry_of(c);

	json_decref(c);
	return e;
}

static void test_new_entry_pod_keys_kept(void **state)
{
	struct ng_record r;
	struct ng_liveplan lp;
	struct ng_err err = {0};
	json_t *e = entry("denyAction", "\"drop\"");

	(void)state;
	record(&r, "sandboxes", "{\"netguard.boxxkite.io/egress\":\"10.50.0.9:443\"}", false);
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), 0);
	/* the new entry, and what the runtime gave for this pod */
	assert_true(ng_entry_is(lp.rec.conf, e));
	assert_true(json_equal(json_object_get(lp.rec.conf, "prevResult"),
			       json_object_get(r.conf, "prevResult")));
	assert_string_equal(ng_recgrants_get(lp.rec.conf), "10.50.0.9:443");
	assert_int_equal(lp.rec.generation, 5);
	assert_int_equal(lp.rec.keep, NG_KEEP_NONE);
	assert_false(lp.kept);
	assert_int_equal(lp.dropped.n, 0);
	/* the pod's identity, link facts and nonce carried; the old record
	 * untouched */
	assert_string_equal(lp.rec.key, r.key);
	assert_string_equal(lp.rec.pod.name, "w1");
	assert_string_equal(lp.rec.nonce, r.nonce);
	assert_true(lp.rec.have_link);
	assert_int_equal(lp.rec.link.ifindex, 2);
	assert_null(json_object_get(r.conf, "denyAction"));
	/* the policy is the new entry's */
	assert_int_equal(lp.rp.pp.policy.deny, NG_DENY_DROP);
	assert_false(lp.rec.audit);
	ng_liveplan_free(&lp);
	json_decref(e);
	ng_record_free(&r);
}

static void test_grants_narrowed(void **state)
{
	struct ng_record r;
	struct ng_liveplan lp;
	struct ng_err err = {0};
	json_t *e = entry("egress", "{\"names\":\"resolve\",\"allow\":[\"tcp://10.20.0.0/16:443\"],"
				    "\"envelope\":[\"10.50.0.0/16:443\"]}");

	(void)state;
	record(&r, "sandboxes",
	       "{\"netguard.boxxkite.io/egress\":\"10.50.0.9:443, api.example.com:443,udp://10.1.1.1:5000\"}",
	       false);
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), 0);
	/* kept as written; the others dropped with why */
	assert_string_equal(ng_recgrants_get(lp.rec.conf), "10.50.0.9:443");
	assert_int_equal(lp.dropped.n, 2);
	assert_contains(lp.dropped.v[0], "api.example.com:443 (");
	assert_contains(lp.dropped.v[0], "outside egress.envelope");
	assert_contains(lp.dropped.v[1], "udp://10.1.1.1:5000");
	assert_int_equal(lp.rp.pp.ann.grants.n, 1);
	/* the record it came from keeps its own */
	assert_contains(ng_recgrants_get(r.conf), "api.example.com");
	ng_liveplan_free(&lp);
	json_decref(e);
	/* an empty envelope: every grant goes, the annotation with them */
	e = entry("egress", "{\"names\":\"resolve\",\"allow\":[\"tcp://10.20.0.0/16:443\"]}");
	assert_int_equal(ng_liveplan_build(&r, e, 6, &lp, &err), 0);
	assert_null(ng_recgrants_get(lp.rec.conf));
	assert_int_equal(lp.dropped.n, 3);
	assert_contains(lp.dropped.v[0], "egress.envelope is empty");
	ng_liveplan_free(&lp);
	json_decref(e);
	ng_record_free(&r);
}

/* `ns`'s pod running audited or not, planned under an entry with `enforce`. */
static void mode(const char *ns, const char *ann, bool audit, const char *enforce, bool want_audit,
		 enum ng_keep want_keep)
{
	struct ng_record r;
	struct ng_liveplan lp;
	struct ng_err err = {0};
	json_t *e = entry("enforce", enforce);

	record(&r, ns, ann, audit);
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), 0);
	assert_int_equal(lp.rec.audit, want_audit);
	assert_int_equal(lp.rec.keep, want_keep);
	assert_int_equal(lp.kept, want_keep != NG_KEEP_NONE);
	assert_int_equal(lp.rp.pp.policy.audit, want_audit);
	if (want_keep != NG_KEEP_NONE)
		assert_contains(lp.rec.reason, "until its DEL");
	ng_liveplan_free(&lp);
	json_decref(e);
	ng_record_free(&r);
}

static void test_never_selected_less(void **state)
{
	(void)state;
	/* audit -> enforce: taken at once */
	mode("staging", "{}", true, "{\"namespaces\":[\"sandboxes\",\"staging\"]}", false, NG_KEEP_NONE);
	/* still audited: stays so */
	mode("staging", "{}", true, "{\"namespaces\":[\"sandboxes\"],\"auditNamespaces\":[\"staging\"]}",
	     true, NG_KEEP_NONE);
	/* enforce -> audit: kept enforced */
	mode("sandboxes", "{}", false, "{\"namespaces\":[],\"auditNamespaces\":[\"sandboxes\"]}", false,
	     NG_KEEP_ENFORCE);
	/* not selected any more: kept as it runs, enforced or audited */
	mode("sandboxes", "{}", false, "{\"namespaces\":[\"other\"]}", false, NG_KEEP_ENFORCE);
	mode("staging", "{}", true, "{\"namespaces\":[\"sandboxes\"]}", true, NG_KEEP_AUDIT);
	/* an opt-in the entry no longer allows (ADD would refuse it): kept */
	mode("elsewhere", "{\"netguard.boxxkite.io/enforce\":\"true\"}", false,
	     "{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":false}", false, NG_KEEP_ENFORCE);
}

static void test_tables_and_failures(void **state)
{
	struct ng_record r;
	struct ng_liveplan lp;
	struct ng_err err = {0};
	json_t *e = entry("rawPacketGuard", "false");

	(void)state;
	record(&r, "sandboxes", "{}", false);
	/* the tables are the new policy's: no guard now; a host side with a peer */
	snprintf(r.link.peer, sizeof(r.link.peer), "veth9");
	r.link.peer_ifindex = 9;
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), 0);
	assert_int_equal(lp.rec.tables.n, 2);
	assert_int_equal(lp.rec.tables.v[0].family, NFPROTO_INET);
	assert_true(lp.rec.tables.v[1].in_node);
	assert_string_equal(lp.rec.tables.v[1].name, "ngh.abc123.eth0");
	ng_liveplan_free(&lp);
	json_decref(e);
	e = entry("hostMirror", "\"off\"");
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), 0);
	assert_int_equal(lp.rec.tables.n, 2); /* inet + guard, no host side */
	assert_false(lp.rec.tables.v[1].in_node);
	ng_liveplan_free(&lp);
	/* a record the pod's policy cannot be built from: the pod keeps its own */
	r.have_link = false;
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), -1);
	assert_contains(err.msg, "link facts");
	ng_liveplan_free(&lp);
	snprintf(r.decision, sizeof(r.decision), "skipped");
	assert_int_equal(ng_liveplan_build(&r, e, 5, &lp, &err), -1);
	ng_liveplan_free(&lp);
	json_decref(e);
	ng_record_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_entry_pod_keys_kept),
		cmocka_unit_test(test_grants_narrowed),
		cmocka_unit_test(test_never_selected_less),
		cmocka_unit_test(test_tables_and_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
