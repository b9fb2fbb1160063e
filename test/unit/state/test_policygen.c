/* The node's policy generation (state/policygen.h): the entry part of a
 * stdin, what changed between two entries (the log's words), the file
 * round trip, and ADD's stamp. */
#include "testutil.h"

#include <unistd.h>

#include "state/policygen.h"

#define ENTRY                                                                                  \
	"{\"cniVersion\":\"1.0.0\",\"name\":\"k8s\",\"type\":\"boxxkite-netguard\","           \
	"\"enforce\":{\"namespaces\":[\"sandboxes\"]},\"dns\":{\"servers\":[\"10.96.0.10\"]}," \
	"\"egress\":{\"allow\":[\"10.20.0.0/16:443\"],\"envelope\":[\"10.0.0.0/8:443\"]}}"

static void test_entry_of_a_stdin(void **state)
{
	json_t *entry = tu_json(ENTRY), *in = tu_json(ENTRY), *e;

	(void)state;
	/* what the runtime adds for one pod is not the platform's policy */
	json_object_set_new(in, "prevResult", tu_json("{\"ips\":[]}"));
	json_object_set_new(in, "runtimeConfig",
			    tu_json("{\"io.kubernetes.cri.pod-annotations\":{\"a\":\"b\"}}"));
	assert_true(ng_entry_is(in, entry));
	e = ng_entry_of(in);
	assert_true(json_equal(e, entry));
	assert_null(json_object_get(e, "prevResult"));
	json_decref(e);
	/* key order and formatting aside, value for value */
	json_object_set_new(in, "dns", tu_json("{\"servers\": [\"10.96.0.10\"]}"));
	assert_true(ng_entry_is(in, entry));
	json_object_set_new(in, "dns", tu_json("{\"servers\":[\"10.96.0.11\"]}"));
	assert_false(ng_entry_is(in, entry));
	json_object_set_new(in, "dns", tu_json("{\"servers\":[\"10.96.0.10\"]}"));
	/* a key more, a key less, another list name */
	json_object_set_new(in, "denyAction", json_string("drop"));
	assert_false(ng_entry_is(in, entry));
	json_object_del(in, "denyAction");
	json_object_del(in, "dns");
	assert_false(ng_entry_is(in, entry));
	json_object_set_new(in, "dns", tu_json("{\"servers\":[\"10.96.0.10\"]}"));
	json_object_set_new(in, "name", json_string("other"));
	assert_false(ng_entry_is(in, entry));
	assert_false(ng_entry_is(NULL, entry));
	json_decref(in);
	json_decref(entry);
}

static void changes(const char *a, const char *b, const char *want)
{
	char buf[256];
	json_t *x = a ? tu_json(a) : NULL, *y = tu_json(b);

	ng_entry_changes(x, y, buf, sizeof(buf));
	assert_string_equal(buf, want);
	json_decref(x);
	json_decref(y);
}

static void test_what_changed(void **state)
{
	(void)state;
	changes("{\"a\":1,\"egress\":{\"allow\":[1],\"envelope\":[2]}}",
		"{\"a\":1,\"egress\":{\"allow\":[1,3],\"envelope\":[2]}}", "egress.allow");
	changes("{\"egress\":{\"allow\":[1]},\"dns\":{\"servers\":[1]}}",
		"{\"egress\":{\"allow\":[1]},\"dns\":{\"servers\":[2]},\"denyAction\":\"drop\"}",
		"dns.servers, denyAction");
	changes("{\"egress\":{\"allow\":[1],\"minPrefixV4\":8}}", "{\"egress\":{\"allow\":[1]}}",
		"egress.minPrefixV4");
	changes("{\"enforce\":{\"namespaces\":[\"a\"]}}", "{\"enforce\":\"x\"}", "enforce");
	changes("{\"a\":1}", "{\"a\":1}", "");
	changes(NULL, "{\"a\":1}", "the whole entry");
}

static void test_file_and_stamp(void **state)
{
	char dir[] = "/tmp/ng-gen-XXXXXX", path[256];
	struct ng_policygen pg = {0}, back;
	struct ng_err err = {0};
	json_t *in = tu_json(ENTRY);

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* none yet: ADD stamps nothing */
	assert_int_equal(ng_policygen_read(dir, &back, &err), 1);
	assert_int_equal(ng_policygen_stamp(dir, in), 0);
	pg.gen = 3;
	pg.at_ms = 1764580000123;
	snprintf(pg.file, sizeof(pg.file), "/etc/cni/net.d/10-k8s.conflist");
	pg.entry = tu_json(ENTRY);
	assert_int_equal(ng_policygen_write(dir, &pg, &err), 0);
	assert_int_equal(ng_policygen_read(dir, &back, &err), 0);
	assert_int_equal(back.gen, 3);
	assert_int_equal(back.at_ms, pg.at_ms);
	assert_string_equal(back.file, pg.file);
	assert_true(json_equal(back.entry, pg.entry));
	ng_policygen_free(&back);
	/* ADD's stdin holds that entry (and its pod's keys): generation 3 */
	json_object_set_new(in, "prevResult", tu_json("{\"ips\":[]}"));
	assert_int_equal(ng_policygen_stamp(dir, in), 3);
	/* another entry (the runtime read another file): 0, the agent decides */
	json_object_set_new(in, "denyAction", json_string("drop"));
	assert_int_equal(ng_policygen_stamp(dir, in), 0);
	/* a file that is not one is refused, and stamps nothing */
	snprintf(path, sizeof(path), "%s/" NG_POLICY_FILE, dir);
	assert_int_equal(truncate(path, 5), 0);
	assert_int_equal(ng_policygen_read(dir, &back, &err), -1);
	assert_int_equal(ng_policygen_stamp(dir, in), 0);
	ng_policygen_free(&pg);
	json_decref(in);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_of_a_stdin),
		cmocka_unit_test(test_what_changed),
		cmocka_unit_test(test_file_and_stamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
