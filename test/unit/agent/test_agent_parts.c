/* The agent's pure parts: the tracker (refresh never shortens, bounded,
 * reverts), DNS-over-TCP framing (hold only the completing segment, rewind
 * on a drop, gaps and retransmissions) and the packet headers. */
#include "testutil.h"

#include "agent/packet.h"
#include "agent/tcpflow.h"
#include "agent/tracker.h"

static struct ng_learn_result one(const char *ip, uint16_t port, uint32_t life)
{
	struct ng_learn_result r = {0};
	struct ng_elem e = {.proto = 6, .p_lo = port, .p_hi = port, .timeout = life};

	ng_ip_parse(ip, &e.lo);
	e.hi = e.lo;
	assert_int_equal(ng_vec_push(&r.single[0], &e), 0);
	return r;
}

static void test_tracker_refresh(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};
	unsigned full = 0;
	struct ng_learn_result r = one("10.0.0.1", 443, 60);

	assert_int_equal(ng_tracker_plan(&t, &r, 1000, &p, &full), 0);
	assert_int_equal(p.n, 1);
	assert_false(p.v[0].refresh); /* new: a plain add */
	/* The same answer 1 s later moves the expiry by 1 s < slack (6 s): no commit. */
	p.n = 0;
	assert_int_equal(ng_tracker_plan(&t, &r, 2000, &p, &full), 0);
	assert_int_equal(p.n, 0);
	/* 10 s later: a refresh (delete + add). */
	assert_int_equal(ng_tracker_plan(&t, &r, 11000, &p, &full), 0);
	assert_int_equal(p.n, 1);
	assert_true(p.v[0].refresh);
	/* A shorter lifetime never shortens. */
	ng_learn_result_free(&r);
	r = one("10.0.0.1", 443, 5);
	p.n = 0;
	assert_int_equal(ng_tracker_plan(&t, &r, 12000, &p, &full), 0);
	assert_int_equal(p.n, 0);
	/* A failed commit reverts: the element is new again. */
	ng_learn_result_free(&r);
	r = one("10.0.0.2", 443, 60);
	assert_int_equal(ng_tracker_plan(&t, &r, 12000, &p, &full), 0);
	assert_int_equal(t.n, 2);
	ng_tracker_revert(&t, &p);
	assert_int_equal(t.n, 1);
	/* Expiry forgets. */
	assert_int_equal(ng_tracker_expire(&t, 11000 + 60000), 1);
	assert_int_equal(t.n, 0);
	ng_learn_result_free(&r);
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

/* Plans the answer "10.x.y.z (the i-th address), tcp 443, 60 s". */
static void plan_nth(struct ng_tracker *t, unsigned i, int64_t now, ng_pending_vec *p, unsigned *full)
{
	char ip[32];
	struct ng_learn_result r;

	snprintf(ip, sizeof(ip), "10.%u.%u.%u", i >> 16, (i >> 8) & 255, i & 255);
	r = one(ip, 443, 60);
	assert_int_equal(ng_tracker_plan(t, &r, now, p, full), 0);
	ng_learn_result_free(&r);
}

static void test_tracker_bound(void **state)
{
	(void)state;
	struct ng_tracker t = {0};
	ng_pending_vec p = {0};
	unsigned full = 0;

	for (unsigned i = 0; i < NG_TRACK_MAX + 10; i++)
		plan_nth(&t, i, 1000, &p, &full);
	assert_int_equal(t.n, NG_TRACK_MAX);
	assert_int_equal(full, 10);
	/* Half expire, half stay: the table stays consistent (all findable). */
	for (uint32_t i = 0; i < t.cap; i++)
		if (t.slot[i].used && (t.slot[i].ip.a[3] & 1))
			t.slot[i].expires = 500;
	ng_tracker_expire(&t, 1000);
	assert_int_equal(t.n, NG_TRACK_MAX / 2);
	p.n = 0;
	for (unsigned i = 0; i < NG_TRACK_MAX; i += 2)
		plan_nth(&t, i, 1500, &p, &full);
	assert_int_equal(p.n, 0); /* every even one found, none re-added */
	ng_vec_free(&p);
	ng_tracker_free(&t);
}

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tracker_refresh), cmocka_unit_test(test_tracker_bound),
		cmocka_unit_test(test_tcp_framing),     cmocka_unit_test(test_tcp_pod_budget),
		cmocka_unit_test(test_packet_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
