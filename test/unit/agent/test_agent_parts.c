/* The agent's pure parts: DNS-over-TCP framing (hold only the completing
 * segment, rewind on a drop, gaps and retransmissions), the packet
 * headers and the log's power-of-two throttle. The tracker has
 * test_tracker.c. */
#include "testutil.h"

#include "agent/alog.h"
#include "agent/packet.h"
#include "agent/tcpflow.h"

/* ---- TCP framing ------------------------------------------------------------ */

static size_t seen;
static void count_msg(const uint8_t *m, size_t len, void *data)
{
	(void)m;
	(void)data;
	seen += len;
}

static struct ng_pkt seg(uint32_t seq, const uint8_t *d, size_t n, uint8_t flags)
{
	struct ng_pkt p = {.proto = 6,
			   .sport = 53,
			   .dport = 40000,
			   .seq = seq,
			   .tcp_flags = flags,
			   .payload = d,
			   .payload_len = n};

	ng_ip_parse("10.96.0.10", &p.src);
	return p;
}

static void test_tcp_framing(void **state)
{
	(void)state;
	struct ng_tcpflows fs = {0};
	size_t budget = 0;
	uint8_t msg[2 + 300];
	struct ng_pkt p = seg(1000, NULL, 0, NG_TCP_SYN | 0x10);
	struct ng_tcpflow *f;

	msg[0] = 1, msg[1] = 44; /* 300 bytes */
	memset(msg + 2, 'x', 300);
	assert_null(ng_tcp_flow(&fs, &(struct ng_pkt){.proto = 6, .sport = 53, .dport = 40000, .seq = 5}, 0));
	f = ng_tcp_flow(&fs, &p, 0);
	assert_non_null(f);
	/* Segment 1 (100 bytes) completes nothing: pass at once. */
	p = seg(1001, msg, 100, 0x10);
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 0);
	ng_tcp_done(f, true, &budget);
	/* A gap: dropped, nothing taken. */
	p = seg(1201, msg + 200, 102, 0x10);
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), -1);
	/* Segment 2 completes the message: held (1), then dropped: rewound. */
	p = seg(1101, msg + 100, 202, 0x10);
	seen = 0;
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 1);
	assert_int_equal(seen, 300);
	ng_tcp_done(f, false, &budget);
	/* Its retransmission completes it again; accepted this time. */
	seen = 0;
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 1);
	assert_int_equal(seen, 300);
	ng_tcp_done(f, true, &budget);
	/* The same segment once more: old bytes, passed, nothing parsed. */
	seen = 0;
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 0);
	assert_int_equal(seen, 0);
	/* Two messages in one segment, plus the start of a third. */
	uint8_t two[2 * 5 + 1] = {0, 3, 'a', 'b', 'c', 0, 3, 'd', 'e', 'f', 0};
	p = seg(1303, two, sizeof(two), 0x10);
	seen = 0;
	assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 2);
	ng_tcp_done(f, true, &budget);
	assert_int_equal(f->len, 1);
	ng_tcp_close(f, &budget);
	assert_int_equal(budget, 0);
}

/* One pod's stalled flows, each holding most of a 64 KiB message, stop at
 * the pod's bound, far below the node's. */
static void test_tcp_pod_budget(void **state)
{
	(void)state;
	struct ng_tcpflows fs = {0};
	size_t budget = 0;
	static uint8_t big[65535];
	int i;

	big[0] = big[1] = 0xff; /* a 65535-byte message, never completed */
	for (i = 0; i < 9; i++) {
		struct ng_pkt p = seg(1000, NULL, 0, NG_TCP_SYN | 0x10);
		struct ng_tcpflow *f;

		p.dport = (uint16_t)(40000 + i);
		f = ng_tcp_flow(&fs, &p, 0);
		assert_non_null(f);
		p = seg(1001, big, sizeof(big), 0x10);
		p.dport = (uint16_t)(40000 + i);
		if (i < 8) {
			assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), 0);
			ng_tcp_done(f, true, &budget);
		} else {
			assert_int_equal(ng_tcp_segment(f, &p, &budget, count_msg, NULL), -1);
		}
	}
	assert_int_equal(budget, 8 * sizeof(big));
	assert_int_equal(fs.held, budget);
	for (i = 0; i < NG_TCP_FLOWS; i++)
		ng_tcp_close(&fs.f[i], &budget);
	assert_int_equal(budget, 0);
	assert_int_equal(fs.held, 0);
}

static void test_packet_headers(void **state)
{
	(void)state;
	uint8_t p4[20 + 8 + 4] = {0x45, 0,   0, 32, 0, 0,  0x40, 0,    64, 17, 0, 0, 10,  96,  0,   10,
				  10,   244, 1, 5,  0, 53, 0x9c, 0x40, 0,  12, 0, 0, 'd', 'n', 's', '!'};
	struct ng_pkt k;

	assert_int_equal(ng_pkt_parse(p4, sizeof(p4), &k), 0);
	assert_int_equal(k.proto, 17);
	assert_int_equal(k.sport, 53);
	assert_int_equal(k.payload_len, 4);
	p4[6] = 0x20; /* more fragments */
	assert_int_equal(ng_pkt_parse(p4, sizeof(p4), &k), -1);
	p4[6] = 0x40;
	p4[25] = 40; /* UDP length past the packet */
	assert_int_equal(ng_pkt_parse(p4, sizeof(p4), &k), -1);
	p4[25] = 12;
	p4[3] = 33; /* IP total length past the buffer */
	assert_int_equal(ng_pkt_parse(p4, sizeof(p4), &k), -1);
	for (size_t cut = 0; cut < sizeof(p4); cut++)
		ng_pkt_parse(p4, cut, &k); /* never reads past the end (ASan) */
}

/* A flood of n events, raised by `by` at a time, makes about log2(n)
 * lines: the 1st, 2nd, 4th, ... and each step that passes a power of two. */
static void test_log_throttle(void **state)
{
	(void)state;
	uint64_t c = 0;
	unsigned lines = 0;

	assert_false(ng_alog_due(0, 0));
	assert_true(ng_alog_due(1, 1));
	assert_true(ng_alog_due(2, 1));
	assert_false(ng_alog_due(3, 1));
	assert_true(ng_alog_due(4, 1));
	assert_false(ng_alog_due(7, 3)); /* 4 was passed before: 5..7 */
	assert_true(ng_alog_due(9, 3));  /* 7..9 passes 8 */
	assert_true(ng_alog_due(3, 3));  /* the first ones */
	assert_true(ng_alog_due(1ULL << 63, 1));
	for (int i = 0; i < 400000; i++) {
		c += 1 + (unsigned)i % 3;
		lines += ng_alog_due(c, 1 + (unsigned)i % 3);
	}
	assert_true(lines <= 21); /* c < 2^20 */
	assert_true(lines >= 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_framing),
		cmocka_unit_test(test_tcp_pod_budget),
		cmocka_unit_test(test_packet_headers),
		cmocka_unit_test(test_log_throttle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
