/* Set element keys in nft's syntax (nft/snapelem.c): each shape of set the
 * plugin renders, and keys that do not fit their layout. */
/* cmocka.h uses these without including them: they come first. */
#include <setjmp.h> // IWYU pragma: keep
#include <stdarg.h> // IWYU pragma: keep
#include <stddef.h> // IWYU pragma: keep
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nft/snapelem.h"

#define V4_CONCAT (NG_TYPE_IPADDR << 12 | NG_TYPE_INET_PROTOCOL << 6 | NG_TYPE_INET_SERVICE)
#define V6_CONCAT (NG_TYPE_IP6ADDR << 12 | NG_TYPE_INET_PROTOCOL << 6 | NG_TYPE_INET_SERVICE)

static void expect_text(uint32_t keytype, const uint8_t *lens, size_t n_lens, const uint8_t *key,
			uint32_t klen, const uint8_t *end, const char *want)
{
	char out[256] = "untouched";

	assert_true(ng_elem_text(keytype, lens, n_lens, key, klen, end, end ? klen : 0, out, sizeof(out)));
	assert_string_equal(out, want);
}

static void test_v4_interval_concat(void **state)
{
	(void)state;
	static const uint8_t lens[] = {4, 1, 2};
	static const uint8_t k[] = {10, 30, 1, 0, 6, 0, 0, 0, 0x01, 0xbb, 0, 0};
	static const uint8_t e[] = {10, 30, 1, 255, 6, 0, 0, 0, 0x01, 0xbb, 0, 0};
	static const uint8_t e2[] = {10, 30, 1, 5, 6, 0, 0, 0, 0x01, 0xbb, 0, 0};
	static const uint8_t host[] = {10, 30, 1, 7, 17, 0, 0, 0, 0x13, 0x88, 0, 0};
	static const uint8_t host_e[] = {10, 30, 1, 7, 17, 0, 0, 0, 0x13, 0x92, 0, 0};

	expect_text(V4_CONCAT, lens, 3, k, sizeof(k), e, "10.30.1.0/24 . tcp . 443");
	/* A range that is not a prefix is LO-HI. */
	expect_text(V4_CONCAT, lens, 3, k, sizeof(k), e2, "10.30.1.0-10.30.1.5 . tcp . 443");
	expect_text(V4_CONCAT, lens, 3, host, sizeof(host), host_e, "10.30.1.7 . udp . 5000-5010");
}

static void test_v6_and_plain(void **state)
{
	(void)state;
	uint8_t k[24] = {0xfd, 0, 0, 0x20}, e[24] = {0xfd, 0, 0, 0x20};
	static const uint8_t meta[] = {169, 254, 169, 254};
	static const uint8_t dns[] = {10, 96, 0, 10, 17, 0, 0, 0, 0, 53, 0, 0};

	memset(e + 8, 0xff, 8);
	k[16] = e[16] = 6;
	k[20] = e[20] = 0x01;
	k[21] = e[21] = 0xbb;
	expect_text(V6_CONCAT, NULL, 0, k, sizeof(k), e, "fd00:20::/64 . tcp . 443");
	expect_text(NG_TYPE_IPADDR, NULL, 0, meta, sizeof(meta), NULL, "169.254.169.254");
	/* Not an interval set: no key end; lengths from the types. */
	expect_text(V4_CONCAT, NULL, 0, dns, sizeof(dns), NULL, "10.96.0.10 . udp . 53");
}

static void test_neighbour_discovery(void **state)
{
	(void)state;
	static const uint8_t lens[] = {16, 1};
	uint8_t k[20] = {0xfe, 0x80}, e[20] = {0xfe, 0xbf};

	memset(e + 2, 0xff, 14);
	k[16] = 135;
	e[16] = 136;
	expect_text(NG_TYPE_IP6ADDR << 6 | NG_TYPE_ICMP6_TYPE, lens, 2, k, sizeof(k), e,
		    "fe80::/10 . nd-neighbor-solicit-nd-neighbor-advert");
}

static void test_refused(void **state)
{
	(void)state;
	static const uint8_t k[] = {10, 30, 1, 0, 6, 0, 0, 0, 0x01, 0xbb, 0, 0};
	static const uint8_t lens[] = {4, 1};
	char out[64] = "untouched";

	/* Shorter or longer than the layout, lengths that do not match the
	 * types, a key end of another length, an unknown type of no length. */
	assert_false(ng_elem_text(V4_CONCAT, NULL, 0, k, 8, NULL, 0, out, sizeof(out)));
	assert_false(ng_elem_text(NG_TYPE_IPADDR, NULL, 0, k, sizeof(k), NULL, 0, out, sizeof(out)));
	assert_false(ng_elem_text(V4_CONCAT, lens, 2, k, sizeof(k), NULL, 0, out, sizeof(out)));
	assert_false(ng_elem_text(V4_CONCAT, NULL, 0, k, sizeof(k), k, 8, out, sizeof(out)));
	assert_false(ng_elem_text(60, NULL, 0, k, 4, NULL, 0, out, sizeof(out)));
	assert_false(ng_elem_text(0, NULL, 0, k, 4, NULL, 0, out, sizeof(out)));
	assert_string_equal(out, "untouched");
}

static void test_line(void **state)
{
	(void)state;
	struct ng_snapshot s = {0};
	char *set =
		strdup("set allow_v4 flags 0x86 keytype 29453 keylen 12 concat [4,1,2] size 1 userdata 00");
	char out[256] = "untouched";

	assert_int_equal(ng_vec_push(&s.lines, &set), 0);
	assert_true(ng_elem_line_text(
		&s, NULL,
		"set allow_v4 element 0a1400000600000001bb0000 - 0a14ffff0600000001bb0000 flags 0x0", out,
		sizeof(out)));
	assert_string_equal(out, "set allow_v4 element 10.20.0.0/16 . tcp . 443 flags 0x0");
	/* The layout is looked up in the second snapshot too. */
	assert_true(ng_elem_line_text(NULL, &s, "set allow_v4 element 0a1400000600000001bb0000 flags 0x1",
				      out, sizeof(out)));
	assert_string_equal(out, "set allow_v4 element 10.20.0.0 . tcp . 443 flags 0x1");
	/* A set of unknown layout, a line that is no element, bad hex: untouched. */
	strcpy(out, "untouched");
	assert_false(ng_elem_line_text(&s, &s, "set dns_v4 element 0a60000a1100000000350000 flags 0x0", out,
				       sizeof(out)));
	assert_false(ng_elem_line_text(&s, &s, "chain egress rule 001: [ ]", out, sizeof(out)));
	assert_false(ng_elem_line_text(&s, &s, "set allow_v4 element 0a14zz flags 0x0", out, sizeof(out)));
	assert_string_equal(out, "untouched");
	ng_snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_interval_concat),
		cmocka_unit_test(test_v6_and_plain),
		cmocka_unit_test(test_neighbour_discovery),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_line),
	};

	return cmocka_run_group_tests_name("snapelem", tests, NULL, NULL);
}
