/* The whole rendered ruleset against the golden file, and the snapshot
 * comparison CHECK makes. */
#include "render_fixtures.h"

/* ---- golden snapshot and diff ---------------------------------------------- */

static char *golden_path(void)
{
	static char path[4096];
	char file[4096];

	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(path, sizeof(path), "%s/golden/ruleset.txt", dirname(file));
	return path;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_golden(void **state)
{
	(void)state;
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};
	struct ng_snapshot s = {.table = NG_TABLE}, raw = {.table = NG_TABLE, .family = NFPROTO_NETDEV};
	char *got = NULL, *want = NULL;
	size_t got_len = 0;
	FILE *f;

	sample_policy(&p, NG_DENY_REJECT);
	/* Logging as the default config has it (log.nflogGroup 65054, 10/s,
	 * burst 20): the log chains, the limit and the skipped counter. */
	p.nflog = true;
	p.nflog_group = NG_DEFAULT_LOG_GROUP;
	p.log_rate = NG_DEFAULT_LOG_RATE;
	p.log_burst = NG_DEFAULT_LOG_BURST;
	snprintf(p.pod, sizeof(p.pod), "sandboxes/golden");
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&s, &b), 0);
	assert_int_equal(ng_snapshot_from_batch(&raw, &b), 0);
	qsort(s.lines.v, s.lines.n, sizeof(char *), cmp_lines);
	qsort(raw.lines.v, raw.lines.n, sizeof(char *), cmp_lines);
	f = open_memstream(&got, &got_len);
	for (size_t i = 0; i < s.lines.n; i++)
		fprintf(f, "%s\n", s.lines.v[i]);
	/* The packet-socket guard: table netdev of the same name. */
	for (size_t i = 0; i < raw.lines.n; i++)
		fprintf(f, "netdev: %s\n", raw.lines.v[i]);
	fclose(f);

	if (getenv("UPDATE_GOLDEN")) {
		f = fopen(golden_path(), "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	f = fopen(golden_path(), "r");
	if (!f)
		fail_msg("cannot read %s (run with UPDATE_GOLDEN=1 to create it)", golden_path());
	want = calloc(1, 1 << 20);
	assert_true(fread(want, 1, (1 << 20) - 1, f) > 0);
	fclose(f);
	if (strcmp(want, got) != 0)
		fail_msg("rendered ruleset differs from %s; got:\n%s", golden_path(), got);
	free(want);
	free(got);
	ng_snapshot_free(&s);
	ng_snapshot_free(&raw);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

static void test_snapshot_diff(void **state)
{
	(void)state;
	struct ng_policy p, q;
	struct ng_batch b1, b2;
	struct ng_err err = {0};
	struct ng_snapshot s1 = {0}, s2 = {0}, s3 = {0};

	sample_policy(&p, NG_DENY_REJECT);
	sample_policy(&q, NG_DENY_DROP);
	ng_batch_init(&b1, NG_TABLE, 1, &err);
	ng_render_replace(&p, &b1, &err);
	ng_batch_init(&b2, NG_TABLE, 1, &err);
	ng_render_replace(&q, &b2, &err);
	ng_snapshot_from_batch(&s1, &b1);
	ng_snapshot_from_batch(&s2, &b2);
	ng_snapshot_from_batch(&s3, &b1);
	assert_int_equal(ng_snapshot_diff(&s1, &s3, &err), 0);
	assert_int_equal(ng_snapshot_diff(&s1, &s2, &err), -1);
	assert_int_equal(err.code, NG_E_CHECK);
	assert_contains(err.msg, "chain refuse_egress");
	/* reject (tcp reset, icmpx) became drop: two rules out, one in. */
	assert_contains(err.msg, "(3 differences); first: unexpected rule at position 2 of chain "
				 "refuse_egress: [ immediate reg 0 drop ]");
	/* details: the other two, not the first again (msg has said it). */
	assert_contains(err.details, "missing rule 2 of chain refuse_egress: [ meta load l4proto");
	assert_contains(err.details, "missing rule 3 of chain refuse_egress: [ reject type 2 code 3 ]");
	assert_null(strstr(err.details, "unexpected rule at position 2"));

	/* One rule inserted at the top of a chain is one difference, not a
	 * shift of every rule after it. */
	char *extra = strdup("chain egress rule 000: [ immediate reg 0 accept ] comment \"\"");
	struct ng_snapshot s4 = {0};
	ng_snapshot_from_batch(&s4, &b1);
	assert_int_equal(ng_vec_push(&s4.lines, &extra), 0);
	/* ...placed first among the egress rules, as a dump would list it. */
	size_t at = 0;
	while (at < s4.lines.n && strncmp(s4.lines.v[at], "chain egress rule 001", 21) != 0)
		at++;
	assert_true(at < s4.lines.n);
	memmove(&s4.lines.v[at + 1], &s4.lines.v[at], (s4.lines.n - 1 - at) * sizeof(char *));
	s4.lines.v[at] = extra;
	assert_int_equal(ng_snapshot_diff(&s3, &s4, &err), -1);
	assert_contains(err.msg, "(1 difference): unexpected rule at position 1 of chain egress");
	assert_string_equal(err.details, "");
	ng_snapshot_free(&s4);

	/* A set element added by hand, and one of ours changed: both named in
	 * nft's syntax, as `nft list set` shows them, not as hex keys. */
	struct ng_snapshot s5 = {0};
	ng_snapshot_from_batch(&s5, &b1);
	for (size_t i = 0; i < s5.lines.n; i++) {
		if (!strncmp(s5.lines.v[i], "set allow_v4 element ", 21)) {
			free(s5.lines.v[i]);
			/* 10.20.0.0/16 . tcp . 443 became 10.20.0.0/16 . tcp . 444 */
			s5.lines.v[i] = strdup("set allow_v4 element 0a1400000600000001bc0000 - "
					       "0a14ffff0600000001bc0000 flags 0x0");
		}
	}
	extra = strdup("set allow_v4 element 0a1e01000600000001bb0000 - 0a1e01ff0600000001bb0000 flags 0x0");
	assert_int_equal(ng_vec_push(&s5.lines, &extra), 0);
	assert_int_equal(ng_snapshot_diff(&s3, &s5, &err), -1);
	assert_contains(
		err.msg,
		"(3 differences); first: missing: set allow_v4 element 10.20.0.0/16 . tcp . 443 flags 0x0");
	assert_contains(err.details, "unexpected: set allow_v4 element 10.20.0.0/16 . tcp . 444 flags 0x0");
	assert_contains(err.details, "unexpected: set allow_v4 element 10.30.1.0/24 . tcp . 443 flags 0x0");
	assert_null(strstr(err.details, "0a1e01"));
	assert_null(strstr(err.details, "missing: set allow_v4 element 10.20.0.0/16 . tcp . 443"));
	ng_snapshot_free(&s5);
	ng_snapshot_free(&s1);
	ng_snapshot_free(&s2);
	ng_snapshot_free(&s3);
	ng_batch_free(&b1);
	ng_batch_free(&b2);
	ng_policy_free(&p);
	ng_policy_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_snapshot_diff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
