/* The drift diff of link facts: every recorded fact that the live link no
 * longer shows is named, old -> new; nothing when they agree. */
#include "testutil.h"

#include "policy/linkdiff.h"

static struct ng_link_facts facts(void)
{
	struct ng_link_facts f = {.have_mac = true,
				  .mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01},
				  .ifindex = 2,
				  .peer = "veth1234",
				  .peer_ifindex = 17};

	assert_int_equal(ng_ip_parse("fe80::200:ff:fe00:1", &f.link_local[0]), 0);
	f.n_link_local = 1;
	return f;
}

static void test_same(void **state)
{
	struct ng_link_facts a = facts(), b = facts();
	char out[256] = "x";

	(void)state;
	assert_int_equal(ng_link_diff(&a, &b, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

static void test_mac_and_address(void **state)
{
	struct ng_link_facts rec = facts(), live = facts();
	char out[256];

	(void)state;
	live.mac[5] = 0x02;
	assert_int_equal(ng_ip_parse("fe80::1", &live.link_local[1]), 0);
	live.n_link_local = 2;
	assert_int_equal(ng_link_diff(&rec, &live, out, sizeof(out)), 2);
	assert_string_equal(out, "mac 02:00:00:00:00:01 -> 02:00:00:00:00:02; link-local fe80::1 added");
}

static void test_gone_and_moved(void **state)
{
	struct ng_link_facts rec = facts(), live = facts();
	char out[256];

	(void)state;
	live.n_link_local = 0;
	live.ifindex = 5;
	snprintf(live.peer, sizeof(live.peer), "vethother");
	assert_int_equal(ng_link_diff(&rec, &live, out, sizeof(out)), 3);
	assert_string_equal(
		out, "link-local fe80::200:ff:fe00:1 gone; ifindex 2 -> 5; host peer veth1234 -> vethother");
	/* the same peer name on another device (deleted and made again) */
	live = facts();
	live.peer_ifindex = 18;
	assert_int_equal(ng_link_diff(&rec, &live, out, sizeof(out)), 1);
	assert_string_equal(out, "host peer veth1234 ifindex 17 -> 18");
	/* no peer any more; no MAC */
	live = facts();
	live.peer[0] = '\0';
	live.have_mac = false;
	assert_int_equal(ng_link_diff(&rec, &live, out, sizeof(out)), 2);
	assert_string_equal(out, "mac 02:00:00:00:00:01 -> none; host peer veth1234 -> none");
}

static void test_cut(void **state)
{
	struct ng_link_facts rec = facts(), live = facts();
	char out[12];

	(void)state;
	live.mac[0] = 0x06;
	live.ifindex = 9;
	/* counted in full, described as far as the buffer goes */
	assert_int_equal(ng_link_diff(&rec, &live, out, sizeof(out)), 2);
	assert_int_equal(strlen(out), sizeof(out) - 1);
	assert_int_equal(ng_link_diff(&rec, &live, NULL, 0), 2);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_mac_and_address),
		cmocka_unit_test(test_gone_and_moved),
		cmocka_unit_test(test_cut),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("linkdiff", tests, NULL, NULL);
}
