/* Who in a pod's namespace could get around the ruleset (verify's
 * capabilities row): /proc parsing, the reach of a capability, and which
 * process is the one --sandbox-pid names. */
#include "testutil.h"

#include "node/proccaps.h"

/* containerd 1.6's pause, as /proc/PID/status shows it (default caps). */
#define PAUSE_STATUS                                                                        \
	"Name:\tpause\nUmask:\t0022\nState:\tS (sleeping)\nCapInh:\t0000000000000000\n"     \
	"CapPrm:\t00000000a80425fb\nCapEff:\t00000000a80425fb\nCapBnd:\t00000000a80425fb\n" \
	"CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"

static void test_parse_status(void **state)
{
	(void)state;
	struct ng_proc p = {0};

	assert_int_equal(ng_proc_parse_status(PAUSE_STATUS, &p), 0);
	assert_string_equal(p.name, "pause");
	assert_true(p.prm == 0xa80425fbULL && p.bnd == 0xa80425fbULL);
	assert_true(p.nnp);
	/* Missing or malformed fields: refused, never read as "no capability". */
	assert_int_equal(ng_proc_parse_status("Name:\tx\nCapBnd:\t0\nNoNewPrivs:\t0\n", &p), -1);
	assert_int_equal(ng_proc_parse_status("Name:\tx\nCapPrm:\tzz\nCapBnd:\t0\nNoNewPrivs:\t0\n", &p), -1);
	assert_int_equal(ng_proc_parse_status("Name:\tx\nCapPrm:\t0\nCapBnd:\t0\n", &p), -1);
	assert_int_equal(ng_proc_parse_status("", &p), -1);
	/* A key must start its line: "XCapPrm" is not CapPrm. */
	assert_int_equal(ng_proc_parse_status("Name:\tx\nXCapPrm:\t0\nCapBnd:\t0\nNoNewPrivs:\t0\n", &p), -1);
	/* A long name is cut, not overflowed. */
	assert_int_equal(
		ng_proc_parse_status("Name:\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\nCapPrm:\t0\n"
				     "CapBnd:\t0\nNoNewPrivs:\t0\n",
				     &p),
		0);
	assert_int_equal(strlen(p.name), sizeof(p.name) - 1);
}

static void test_parse_start(void **state)
{
	(void)state;
	unsigned long long t = 0;

	assert_int_equal(ng_proc_parse_start("42 (sleep) S 1 42 42 0 -1 4194304 96 0 0 0 0 0 0 0 20 0 1 0 "
					     "1551499 8192000 200 18446744073709551615\n",
					     &t),
			 0);
	assert_true(t == 1551499ULL);
	/* A comm with spaces and ')' in it: the last ')' ends it. */
	assert_int_equal(
		ng_proc_parse_start("7 (a) b (c) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 1 2\n", &t), 0);
	assert_true(t == 99ULL);
	assert_int_equal(ng_proc_parse_start("7 (x) S 1 2 3\n", &t), -1);
	assert_int_equal(ng_proc_parse_start("no comm", &t), -1);
}

static void test_reach(void **state)
{
	(void)state;
	uint64_t raw = 1ULL << NG_CAP_NET_RAW, admin = 1ULL << NG_CAP_NET_ADMIN;
	struct ng_proc root_default = {.prm = 0xa80425fbULL, .bnd = 0xa80425fbULL},
		       restricted = {.prm = 0, .bnd = 0, .nnp = true},
		       nonroot = {.prm = 0, .bnd = raw, .nnp = false},
		       nonroot_nnp = {.prm = 0, .bnd = raw, .nnp = true},
		       admin_only = {.prm = admin, .bnd = admin};

	assert_int_equal(ng_proc_cap_reach(&root_default, NG_CAP_NET_RAW), NG_CAP_NOW);
	assert_int_equal(ng_proc_cap_reach(&root_default, NG_CAP_NET_ADMIN), NG_CAP_NO);
	assert_int_equal(ng_proc_cap_reach(&restricted, NG_CAP_NET_RAW), NG_CAP_NO);
	assert_int_equal(ng_proc_cap_reach(&nonroot, NG_CAP_NET_RAW), NG_CAP_BY_EXEC);
	assert_int_equal(ng_proc_cap_reach(&nonroot_nnp, NG_CAP_NET_RAW), NG_CAP_NO);
	assert_int_equal(ng_proc_cap_reach(&admin_only, NG_CAP_NET_ADMIN), NG_CAP_NOW);
}

/* A process reaches what its most capable thread reaches. */
static void test_merge_thread(void **state)
{
	(void)state;
	uint64_t raw = 1ULL << NG_CAP_NET_RAW, admin = 1ULL << NG_CAP_NET_ADMIN;
	struct ng_proc dropped = {.pid = 7, .name = "leader", .prm = 0, .bnd = 0, .nnp = true}, p;
	const struct ng_proc kept = {.prm = raw | admin, .bnd = raw | admin, .nnp = false},
			     exec_raw = {.prm = 0, .bnd = raw, .nnp = false},
			     nnp_raw = {.prm = 0, .bnd = raw | admin, .nnp = true};

	/* The leader dropped everything, a thread kept both: NOW. */
	p = dropped;
	ng_proc_merge_thread(&p, &kept);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_RAW), NG_CAP_NOW);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_ADMIN), NG_CAP_NOW);
	assert_int_equal(p.pid, 7);
	assert_string_equal(p.name, "leader");
	/* A thread without no_new_privs and NET_RAW in its bounding set. */
	p = dropped;
	ng_proc_merge_thread(&p, &exec_raw);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_RAW), NG_CAP_BY_EXEC);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_ADMIN), NG_CAP_NO);
	/* ...then one with no_new_privs and both bounded: still only NET_RAW
	 * by exec (that thread cannot gain its bounding set). */
	ng_proc_merge_thread(&p, &nnp_raw);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_RAW), NG_CAP_BY_EXEC);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_ADMIN), NG_CAP_NO);
	/* Threads that all set no_new_privs: nothing by exec. */
	p = dropped;
	ng_proc_merge_thread(&p, &nnp_raw);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_RAW), NG_CAP_NO);
	assert_true(p.nnp);
	/* A leader that could, merged with a thread that cannot: still can. */
	p = exec_raw;
	ng_proc_merge_thread(&p, &dropped);
	assert_int_equal(ng_proc_cap_reach(&p, NG_CAP_NET_RAW), NG_CAP_BY_EXEC);
}

/* Issue 13 item 7: only the pid the runtime names is the infra process.
 * The oldest process calling itself pause is not exempt by that. */
static void test_infra(void **state)
{
	(void)state;
	struct ng_proc v[3] = {{.pid = 300, .name = "python3", .start = 500},
			       {.pid = 100, .name = "pause", .start = 100},
			       {.pid = 200, .name = "pause", .start = 400}};

	/* No --sandbox-pid: none, however old and well named. */
	assert_int_equal(ng_proc_infra(v, 3, 0), -1);
	/* The runtime's pid: that one, and only it. */
	assert_int_equal(ng_proc_infra(v, 3, 100), 1);
	assert_int_equal(ng_proc_infra(v, 3, 200), 2);
	/* A pid that is not in the namespace exempts nothing. */
	assert_int_equal(ng_proc_infra(v, 3, 999), -1);
	assert_int_equal(ng_proc_infra(NULL, 0, 100), -1);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_start),
		cmocka_unit_test(test_reach),
		cmocka_unit_test(test_merge_thread),
		cmocka_unit_test(test_infra),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
