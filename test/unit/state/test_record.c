/* The pod record (state/record.h): JSON round trip with the link facts,
 * the refusals of a malformed record, the files (refused records kept past
 * DEL, a record under another name refused, nothing written without a
 * stateDir), the agent's sweep of ready files, the one table list, and the
 * hand-off of ADD's decision. */
#include "testutil.h"

#include <linux/netfilter.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/decision_log.h"
#include "policy/config.h"
#include "state/handoff.h"
#include "state/invstats.h"
#include "state/migrate.h"
#include "state/ready.h"
#include "state/record.h"

static void fill(struct ng_record *r, const char *decision)
{
	struct ng_record_table t = {.family = NFPROTO_NETDEV, .name = "boxxkite_netguard"};
	struct ng_err err = {0};

	memset(r, 0, sizeof(*r));
	assert_int_equal(ng_podref_set(&r->pod, "sandboxes", "s1", "abc123", "eth0", "/run/netns/x", &err),
			 0);
	r->pod.netns_dev = 4;
	r->pod.netns_ino = 4026532999;
	snprintf(r->key, sizeof(r->key), "abc123@eth0");
	snprintf(r->decision, sizeof(r->decision), "%s", decision);
	snprintf(r->reason, sizeof(r->reason), "namespace sandboxes is enforced");
	r->at_ms = 1764580000123;
	r->learn = true;
	assert_int_equal(ng_record_new_nonce(r, &err), 0);
	assert_int_equal(ng_vec_push(&r->tables, &t), 0);
	r->have_link = true;
	r->link.ifindex = 2;
	r->link.peer_ifindex = 17;
	snprintf(r->link.peer, sizeof(r->link.peer), "veth1234");
	r->link.have_mac = true;
	memcpy(r->link.mac, "\x02\x42\x0a\x00\x00\x05", 6);
	assert_int_equal(ng_ip_parse("fe80::42:aff:fe00:5", &r->link.link_local[0]), 0);
	r->link.n_link_local = 1;
	r->conf = tu_json("{\"type\":\"boxxkite-netguard\"}");
}

static void test_json_round_trip(void **state)
{
	struct ng_record r, back;
	struct ng_err err = {0};
	json_t *o;

	(void)state;
	fill(&r, "enforced");
	o = ng_record_to_json(&r);
	assert_non_null(o);
	assert_int_equal(ng_record_from_json(o, &back, &err), 0);
	assert_string_equal(back.key, r.key);
	assert_string_equal(back.pod.name, "s1");
	assert_string_equal(back.pod.netns, "/run/netns/x");
	assert_int_equal(back.pod.netns_ino, r.pod.netns_ino);
	assert_string_equal(back.decision, "enforced");
	assert_string_equal(back.nonce, r.nonce);
	assert_int_equal(back.at_ms, r.at_ms);
	assert_true(back.learn);
	assert_int_equal(back.tables.n, 1);
	assert_int_equal(back.tables.v[0].family, NFPROTO_NETDEV);
	assert_false(back.tables.v[0].in_node);
	/* The link facts ADD planned with come back exactly: a rebuild uses
	 * them, never the pod's present. */
	assert_true(back.have_link);
	assert_memory_equal(back.link.mac, r.link.mac, 6);
	assert_true(back.link.have_mac);
	assert_int_equal(back.link.ifindex, 2);
	assert_int_equal(back.link.peer_ifindex, 17);
	assert_string_equal(back.link.peer, "veth1234");
	assert_int_equal(back.link.n_link_local, 1);
	assert_true(ng_ip_eq(&back.link.link_local[0], &r.link.link_local[0]));
	assert_true(json_equal(back.conf, r.conf));
	ng_record_free(&back);

	/* What a reader refuses: no container id, a bad MAC, too many
	 * link-local addresses, another version. */
	json_object_del(json_object_get(o, "pod"), "containerId");
	assert_int_equal(ng_record_from_json(o, &back, &err), -1);
	json_decref(o);
	o = ng_record_to_json(&r);
	json_object_set_new(json_object_get(o, "link"), "mac", json_string("02:42:0a:00:00"));
	assert_int_equal(ng_record_from_json(o, &back, &err), -1);
	json_decref(o);
	o = ng_record_to_json(&r);
	for (int i = 0; i < NG_LINK_LOCAL_MAX; i++)
		json_array_append_new(json_object_get(json_object_get(o, "link"), "linkLocal"),
				      json_string("fe80::1"));
	assert_int_equal(ng_record_from_json(o, &back, &err), -1);
	json_decref(o);
	o = ng_record_to_json(&r);
	json_object_set_new(o, "version", json_integer(1));
	assert_int_equal(ng_record_from_json(o, &back, &err), -1);
	json_decref(o);
	ng_record_free(&r);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/ng-rec-XXXXXX", path[256], other[256], key[64];
	struct ng_record r, back;
	struct ng_err err = {0};
	bool refused;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill(&r, "refused");
	/* A refused ADD is kept past the runtime's DEL ... */
	assert_int_equal(ng_record_write(dir, &r, false, &err), 0);
	assert_int_equal(ng_record_remove(dir, r.key, 0, &err), 0);
	snprintf(path, sizeof(path), "%s/pods/abc123@eth0.refused.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(ng_record_read(path, &back, &err), 0);
	assert_true(back.refused_file);
	ng_record_free(&back);
	/* ... until the same pod gets through, and DEL removes that one. */
	snprintf(r.decision, sizeof(r.decision), "enforced");
	assert_int_equal(ng_record_write(dir, &r, false, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/pods/abc123@eth0.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	/* A record copied under another pod's name is not that pod's. */
	snprintf(other, sizeof(other), "%s/pods/zzz@eth0.json", dir);
	assert_int_equal(link(path, other), 0);
	assert_int_equal(ng_record_read(other, &back, &err), -1);
	assert_contains(err.msg, "does not match its name");
	unlink(other);
	assert_int_equal(ng_record_remove(dir, r.key, 0, &err), 0);
	assert_int_equal(access(path, F_OK), -1);
	ng_record_free(&r);
	snprintf(path, sizeof(path), "%s/pods", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	/* No stateDir: nothing is written, nothing is created ... */
	fill(&r, "enforced");
	assert_int_equal(ng_record_write(dir, &r, false, &err), 0);
	assert_int_equal(access(dir, F_OK), -1);
	/* ... unless the agent must learn for the pod. */
	snprintf(r.decision, sizeof(r.decision), "pending");
	assert_int_equal(ng_record_write(dir, &r, true, &err), 0);
	snprintf(path, sizeof(path), "%s/pods/abc123@eth0.json", dir);
	assert_int_equal(access(path, F_OK), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pods", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/ready", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	ng_record_free(&r);

	assert_true(ng_record_name("a@eth0.json", key, sizeof(key), &refused));
	assert_string_equal(key, "a@eth0");
	assert_false(refused);
	assert_true(ng_record_name("a@eth0.refused.json", key, sizeof(key), &refused));
	assert_string_equal(key, "a@eth0");
	assert_true(refused);
	assert_false(ng_record_name(".a@eth0.json.123.tmp", key, sizeof(key), &refused));
	assert_false(ng_record_name("a@eth0.txt", key, sizeof(key), &refused));
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Live policy's fields, and the agent's rewrite of a record: only in
 * place of the file it planned from, never over a DEL or a retried ADD. */
static void test_replace(void **state)
{
	char dir[] = "/tmp/ng-rep-XXXXXX", path[256];
	struct ng_record r, back;
	struct ng_err err = {0};
	uint64_t ino, now = 0;
	json_t *o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fill(&r, "enforced");
	r.generation = 7;
	r.keep = NG_KEEP_AUDIT;
	o = ng_record_to_json(&r);
	assert_int_equal(ng_record_from_json(o, &back, &err), 0);
	assert_int_equal(back.generation, 7);
	assert_int_equal(back.keep, NG_KEEP_AUDIT);
	ng_record_free(&back);
	json_object_set_new(o, "keep", json_string("nothing"));
	assert_int_equal(ng_record_from_json(o, &back, &err), -1);
	assert_contains(err.msg, "keep");
	json_decref(o);

	assert_int_equal(ng_record_write(dir, &r, true, &err), 0);
	snprintf(path, sizeof(path), "%s/pods/abc123@eth0.json", dir);
	ino = ino_of(path);
	r.generation = 8;
	assert_int_equal(ng_record_replace(dir, &r, ino, &now, &err), 0);
	assert_int_not_equal(now, ino);
	assert_int_equal(now, ino_of(path));
	assert_int_equal(ng_record_read(path, &back, &err), 0);
	assert_int_equal(back.generation, 8);
	ng_record_free(&back);
	/* planned from a file that is not there any more (a retried ADD wrote
	 * another): nothing written, theirs stays */
	r.generation = 9;
	assert_int_equal(ng_record_replace(dir, &r, ino, &now, &err), 1);
	assert_int_equal(ng_record_read(path, &back, &err), 0);
	assert_int_equal(back.generation, 8);
	ng_record_free(&back);
	/* the record gone (DEL): not brought back */
	assert_int_equal(ng_record_remove(dir, r.key, 0, &err), 0);
	assert_int_equal(ng_record_replace(dir, &r, now, &now, &err), 1);
	assert_int_equal(access(path, F_OK), -1);
	ng_record_free(&r);
	snprintf(path, sizeof(path), "%s/pods", dir);
	assert_int_equal(rmdir(path), 0);
	snprintf(path, sizeof(path), "%s/ready", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static bool keep_b(const char *name, void *data)
{
	(void)data;
	return !strcmp(name, "b@eth0");
}

/* The agent's sweep of ready/: what it does not serve goes (a pod deleted
 * while no agent ran, a temp file a killed agent left), what it serves
 * stays. */
static void test_sweep_ready(void **state)
{
	char dir[] = "/tmp/ng-ready-XXXXXX", path[300];
	struct ng_err err = {0};

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(ng_record_sweep_ready(dir, keep_b, NULL), 0); /* no ready/ yet */
	snprintf(path, sizeof(path), "%s/ready", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(ng_record_set_ready(dir, "a@eth0", "0123456789abcdef0123456789abcdef", &err), 0);
	assert_int_equal(ng_record_set_ready(dir, "b@eth0", "0123456789abcdef0123456789abcdef", &err), 0);
	snprintf(path, sizeof(path), "%s/ready/.tmp.left", dir);
	fclose(fopen(path, "w"));
	assert_int_equal(ng_record_sweep_ready(dir, keep_b, NULL), 2);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/ready/a@eth0", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/ready/b@eth0", dir);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(ng_record_sweep_ready(dir, keep_b, NULL), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ready", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The one list of a pod's tables: inet, the guard when on, the host side
 * when planned. */
static void test_tables(void **state)
{
	struct ng_policy p = {0};
	ng_record_table_vec t = {0};

	(void)state;
	assert_int_equal(ng_record_tables(&p, "ngh.c.eth0", &t), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.v[0].family, NFPROTO_INET);
	p.raw_guard = true;
	p.host = true;
	assert_int_equal(ng_record_tables(&p, "ngh.c.eth0", &t), 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.v[1].family, NFPROTO_NETDEV);
	assert_false(t.v[1].in_node);
	assert_true(t.v[2].in_node);
	assert_string_equal(t.v[2].name, "ngh.c.eth0");
	ng_vec_free(&t);
}

/* A refused config still lands in the entry's stateDir (its parse may have
 * stopped before stateDir, leaving the default in the config struct), and
 * a refused record keeps no configuration. */
static void test_refusal_reaches_the_entry_state_dir(void **state)
{
	char dir[] = "/tmp/ng-hand-XXXXXX", text[256], path[300];
	struct ng_record r, back;
	struct ng_err err = {0};
	struct ng_log log;
	json_t *root;
	struct ng_handoff h = {.state_dir = NG_DEFAULT_STATE_DIR, .verb = "ADD", .log = &log, .record = &r};
	FILE *f;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(text, sizeof(text), "{\"stateDir\":\"%s\",\"bogus\":1}", dir);
	root = tu_json(text);
	h.root = root;
	fill(&r, "");
	snprintf(r.key, sizeof(r.key), "c1@eth0");
	ng_log_begin(&log, "ADD");
	snprintf(log.decision, sizeof(log.decision), "refused");
	snprintf(log.reason, sizeof(log.reason), "bogus: unknown key");
	ng_handoff(&h);
	snprintf(path, sizeof(path), "%s/pods/c1@eth0.refused.json", dir);
	assert_int_equal(ng_record_read(path, &back, &err), 0);
	assert_string_equal(back.decision, "refused");
	assert_string_equal(back.reason, "bogus: unknown key");
	assert_null(back.conf);
	assert_false(back.have_link);
	assert_int_equal(back.tables.n, 0);
	ng_record_free(&back);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	assert_int_equal(strncmp(text, "ADD refused ", 12), 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pods", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	json_decref(root);
	ng_record_free(&r);
}

/* 0.2's two files of one learn-mode pod become one record: identity,
 * namespace identity, nonce, tables, stdin; no link facts (the agent reads
 * them from the running pod once). */
static void test_migrate_v1(void **state)
{
	struct ng_record r;
	struct ng_err err = {0};
	json_t *dec =
		tu_json("{\"version\":1,\"key\":\"c1@eth0\",\"podNamespace\":\"sandboxes\","
			"\"podName\":\"p1\",\"containerId\":\"c1\",\"ifname\":\"eth0\","
			"\"netns\":\"/run/netns/p1\",\"netnsIno\":4026532001,\"decision\":\"enforced\","
			"\"reason\":\"namespace sandboxes\",\"code\":0,\"at\":1764580000123,\"learn\":true,"
			"\"tables\":[{\"netns\":\"pod\",\"family\":\"inet\",\"table\":\"boxxkite_netguard\"},"
			"{\"netns\":\"node\",\"family\":\"netdev\",\"table\":\"ngh.c1.eth0\"}],"
			"\"conf\":{\"type\":\"boxxkite-netguard\"}}");
	json_t *pod = tu_json("{\"version\":1,\"nonce\":\"0123456789abcdef0123456789abcdef\","
			      "\"netnsDev\":4,\"netnsIno\":4026532001}");

	(void)state;
	assert_int_equal(ng_migrate_v1(dec, pod, &r, &err), 0);
	assert_string_equal(r.key, "c1@eth0");
	assert_string_equal(r.pod.ns, "sandboxes");
	assert_string_equal(r.pod.netns, "/run/netns/p1");
	assert_int_equal(r.pod.netns_dev, 4);
	assert_int_equal(r.pod.netns_ino, 4026532001);
	assert_string_equal(r.nonce, "0123456789abcdef0123456789abcdef");
	assert_int_equal(r.tables.n, 2);
	assert_true(r.tables.v[1].in_node);
	assert_int_equal(r.tables.v[1].family, NFPROTO_NETDEV);
	assert_false(r.have_link);
	assert_non_null(r.conf);
	ng_record_free(&r);
	json_object_set_new(dec, "version", json_integer(2));
	assert_int_equal(ng_migrate_v1(dec, pod, &r, &err), -1);
	json_object_set_new(dec, "version", json_integer(1));
	json_object_set_new(dec, "containerId", json_string("../x"));
	assert_int_equal(ng_migrate_v1(dec, NULL, &r, &err), -1);
	json_decref(dec);
	json_decref(pod);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_sweep_ready),
		cmocka_unit_test(test_refusal_reaches_the_entry_state_dir),
		cmocka_unit_test(test_migrate_v1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
