/* nft/snapnames.c: what CHECK and verify accept in the DNS-name sets they
 * cannot recompute. Issue 13 item 1: a set holding 0.0.0.0/0 . tcp . 443
 * (what a process with NET_ADMIN can write) must be a difference. */
#include "testutil.h"

#include <arpa/inet.h>

#include "nft/snapnames.h"
#include "nft/snapshot.h"

/* A name-set key: addr . proto . port (each field padded to 4 bytes). */
static uint32_t key_of(uint8_t *k, const char *ip, uint8_t proto, uint16_t port)
{
	struct ng_ip a;
	uint32_t alen;
	uint16_t be = htons(port);

	assert_int_equal(ng_ip_parse(ip, &a), 0);
	alen = (uint32_t)ng_ip_len(a.fam);
	memset(k, 0, 64);
	memcpy(k, a.a, alen);
	k[alen] = proto;
	memcpy(k + alen + 4, &be, 2);
	return alen + 8;
}

/* Problems the snapshot records for one element start..end. */
static size_t problems_for(const char *set, bool ttl, const char *lo, const char *hi, uint16_t port,
			   const char **first)
{
	static ng_elem_vec shapes;
	static struct ng_snapshot s;
	struct ng_elem shape = {.proto = 6, .p_lo = 443, .p_hi = 443};
	uint8_t k[64], e[64];
	uint32_t kl = key_of(k, lo, 6, port), el = key_of(e, hi, 6, port);
	struct nftnl_set_elem *elem = nftnl_set_elem_alloc();

	ng_snapshot_free(&s);
	ng_vec_free(&shapes);
	memset(&s, 0, sizeof(s));
	memset(&shapes, 0, sizeof(shapes));
	assert_int_equal(ng_vec_push(&shapes, &shape), 0);
	s.name_ports = &shapes;
	ng_snap_name_elem(&s, set, ttl, k, kl, e, el, "hex", elem);
	nftnl_set_elem_free(elem);
	*first = s.problems.n ? s.problems.v[0] : "";
	return s.problems.n;
}

static void test_single_address_only(void **state)
{
	(void)state;
	const char *msg;

	/* One answer: fine, in both sets. */
	assert_int_equal(problems_for("names_v4", false, "10.50.0.1", "10.50.0.1", 443, &msg), 0);
	assert_int_equal(problems_for("names_v4_ttl", true, "10.50.0.1", "10.50.0.1", 443, &msg), 0);
	assert_int_equal(problems_for("names_v6", false, "fd00:50::1", "fd00:50::1", 443, &msg), 0);
	/* The whole address space, or two hosts: a difference, in both sets. */
	assert_int_equal(problems_for("names_v4", false, "0.0.0.0", "255.255.255.255", 443, &msg), 1);
	assert_contains(msg, "covers more than one address");
	assert_int_equal(problems_for("names_v4_ttl", true, "0.0.0.0", "255.255.255.255", 443, &msg), 1);
	assert_contains(msg, "names_v4_ttl");
	assert_int_equal(problems_for("names_v4", false, "10.50.0.1", "10.50.0.2", 443, &msg), 1);
	assert_int_equal(
		problems_for("names_v6", false, "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 443, &msg),
		1);
	assert_contains(msg, "a DNS answer is a single host");
	/* And a port no name entry has, as before. */
	assert_int_equal(problems_for("names_v4", false, "10.50.0.1", "10.50.0.1", 22, &msg), 1);
	assert_contains(msg, "matches no DNS-name entry");
	assert_int_equal(problems_for("names_v4_ttl", true, "10.50.0.1", "10.50.0.1", 22, &msg), 1);
}

/* The twin cross-check (ng_snapshot_check_names), at a size where a
 * quadratic walk would show: each pinned element's _ttl twin found, in any
 * order, per family; one without a twin named. */
static void test_twins(void **state)
{
	(void)state;
	struct ng_snapshot s = {0};
	ng_elem_vec shapes = {0};
	struct ng_elem shape = {.proto = 6, .p_lo = 443, .p_hi = 443};
	uint8_t k[64];
	char ip[32], hex[16];
	int n = 20000;

	assert_int_equal(ng_vec_push(&shapes, &shape), 0);
	s.name_ports = &shapes;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++) {
			/* the _ttl set in reverse order, so twins are far apart */
			int j = pass ? n - 1 - i : i;
			struct nftnl_set_elem *e = nftnl_set_elem_alloc();
			uint32_t kl;

			snprintf(ip, sizeof(ip), "10.%d.%d.%d", j / 65536, j / 256 % 256, j % 256);
			snprintf(hex, sizeof(hex), "k%d", j);
			kl = key_of(k, ip, 6, 443);
			/* the last pinned element has no twin */
			if (!(pass == 1 && j == n - 1))
				ng_snap_name_elem(&s, pass ? "names_v4_ttl" : "names_v4", pass != 0, k, kl,
						  NULL, 0, hex, e);
			nftnl_set_elem_free(e);
		}
	/* the same key in the other family's set is no twin */
	{
		struct nftnl_set_elem *e = nftnl_set_elem_alloc();
		uint32_t kl = key_of(k, "fd00::1", 6, 443);

		ng_snap_name_elem(&s, "names_v6_ttl", true, k, kl, NULL, 0, "k0", e);
		nftnl_set_elem_free(e);
	}
	s.name_elems.v[n - 1].expires = 4000000000; /* its expiry still ahead */
	ng_snapshot_check_names(&s, 1000);
	assert_int_equal(s.problems.n, 2);
	assert_contains(s.problems.v[0], "names_v6_ttl");
	assert_contains(s.problems.v[1], "missing before its expiry");
	ng_snapshot_free(&s);
	ng_vec_free(&shapes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_address_only),
		cmocka_unit_test(test_twins),
	};
	return cmocka_run_group_tests_name("snapnames", tests, NULL, NULL);
}
