/* Packets the agent writes itself (agent/pktbuild.h): read back by the
 * agent's own parser, checksums verified the way a receiver does. */
#include "testutil.h"

#include "agent/packet.h"
#include "agent/pktbuild.h"

static struct ng_ip ip(const char *s)
{
	struct ng_ip a;

	assert_int_equal(ng_ip_parse(s, &a), 0);
	return a;
}

/* The ones' complement sum over the pseudo-header and the transport
 * bytes: 0xffff for a correct checksum. */
static uint16_t l4_sum(const uint8_t *pkt, size_t n)
{
	bool v4 = (pkt[0] >> 4) == 4;
	size_t ih = v4 ? 20 : 40, alen = v4 ? 4 : 16, l4 = n - ih;
	const uint8_t *src = pkt + (v4 ? 12 : 8), *dst = src + alen;
	uint32_t s = 0;

	for (size_t i = 0; i < alen; i += 2)
		s += (uint32_t)(src[i] << 8 | src[i + 1]) + (uint32_t)(dst[i] << 8 | dst[i + 1]);
	s += v4 ? pkt[9] : pkt[6];
	s += (uint32_t)l4;
	for (size_t i = 0; i < l4; i += 2)
		s += (uint32_t)(pkt[ih + i] << 8 | (i + 1 < l4 ? pkt[ih + i + 1] : 0));
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint16_t ip4_sum(const uint8_t *pkt)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)(pkt[i] << 8 | pkt[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void test_udp_both_families(void **state)
{
	static const char *pairs[][2] = {{"10.96.0.10", "10.244.1.5"}, {"fd00:10:96::a", "fd00:244:1::5"}};
	uint8_t out[600], pl[33];

	(void)state;
	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)(i * 7);
	for (int f = 0; f < 2; f++) {
		struct ng_pktspec s = {.src = ip(pairs[f][0]),
				       .dst = ip(pairs[f][1]),
				       .proto = 17,
				       .sport = 53,
				       .dport = 40000};
		size_t n = ng_pkt_build(&s, pl, sizeof(pl), out, sizeof(out));
		struct ng_pkt k;

		assert_int_equal(n, (f ? 40 : 20) + 8 + sizeof(pl));
		assert_int_equal(ng_pkt_parse(out, n, &k), 0);
		assert_true(ng_ip_eq(&k.src, &s.src));
		assert_true(ng_ip_eq(&k.dst, &s.dst));
		assert_int_equal(k.proto, 17);
		assert_int_equal(k.sport, 53);
		assert_int_equal(k.dport, 40000);
		assert_int_equal(k.payload_len, sizeof(pl));
		assert_memory_equal(k.payload, pl, sizeof(pl));
		assert_int_equal(l4_sum(out, n), 0xffff);
		if (!f)
			assert_int_equal(ip4_sum(out), 0xffff);
	}
}

static void test_tcp_segment(void **state)
{
	uint8_t out[600];
	struct ng_pktspec s = {.src = ip("10.96.0.10"),
			       .dst = ip("10.244.1.5"),
			       .proto = 6,
			       .sport = 53,
			       .dport = 41000,
			       .seq = 0xdeadbeef,
			       .ack = 0x01020304,
			       .flags = NG_TCP_ACK | NG_TCP_PSH | NG_TCP_FIN};
	size_t n = ng_pkt_build(&s, (const uint8_t *)"\x00\x03xyz", 5, out, sizeof(out));
	struct ng_pkt k;

	(void)state;
	assert_int_equal(n, 20 + 20 + 5);
	assert_int_equal(ng_pkt_parse(out, n, &k), 0);
	assert_int_equal(k.seq, 0xdeadbeef);
	assert_int_equal(k.ack, 0x01020304);
	assert_int_equal(k.tcp_flags, NG_TCP_ACK | NG_TCP_PSH | NG_TCP_FIN);
	assert_int_equal(k.payload_len, 5);
	assert_int_equal(l4_sum(out, n), 0xffff);
	assert_int_equal(ip4_sum(out), 0xffff);
	/* An odd length, IPv6, a bare reset. */
	s.src = ip("fd00:10:96::a");
	s.dst = ip("fd00::5");
	s.flags = NG_TCP_RST;
	n = ng_pkt_build(&s, NULL, 0, out, sizeof(out));
	assert_int_equal(n, 60);
	assert_int_equal(l4_sum(out, n), 0xffff);
}

static void test_refusals(void **state)
{
	uint8_t out[100];
	struct ng_pktspec s = {.src = ip("10.96.0.10"), .dst = ip("fd00::5"), .proto = 17};

	(void)state;
	assert_int_equal(ng_pkt_build(&s, NULL, 0, out, sizeof(out)), 0); /* families differ */
	s.dst = ip("10.244.1.5");
	assert_int_equal(ng_pkt_build(&s, out, 73, out, sizeof(out)), 0); /* does not fit */
	s.proto = 1;
	assert_int_equal(ng_pkt_build(&s, NULL, 0, out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_both_families),
		cmocka_unit_test(test_tcp_segment),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
