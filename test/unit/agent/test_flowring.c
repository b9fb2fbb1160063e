/* The agent's flow log: its ring (history, --since, a cursor that falls
 * behind told what it missed), the learner's lock-free queue (full: dropped
 * and counted, never waiting), the per-pod token bucket, and a client of
 * the socket (request, start, filtered lines, a stalled reader, a names
 * answer) over a socketpair. */
#include "testutil.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/flowclient.h"
#include "agent/flowq.h"
#include "agent/flowring.h"

static struct ng_flow_ev ev_at(int64_t ts, const char *name, const char *category)
{
	struct ng_flow_ev ev = {.kind = NG_FLOW_REFUSAL, .ts_ms = ts};

	snprintf(ev.ns, sizeof(ev.ns), "sandboxes");
	snprintf(ev.name, sizeof(ev.name), "%s", name);
	snprintf(ev.category, sizeof(ev.category), "%s", category);
	return ev;
}

static void test_ring(void **state)
{
	(void)state;
	struct ng_flowring r;
	struct ng_flowcursor c = {.next = 1};
	struct ng_flow_ev e;

	assert_int_equal(ng_flowring_init(&r), 0);
	assert_int_equal(ng_flowring_oldest(&r), 1);
	assert_null(ng_flowring_get(&r, 1));
	assert_null(ng_flowcursor_next(&r, &c));
	for (int i = 0; i < 10; i++) {
		e = ev_at(1000 + i, "web", "egress");
		assert_int_equal(ng_flowring_push(&r, &e), (uint64_t)i + 1);
	}
	assert_int_equal(ng_flowring_get(&r, 3)->ts_ms, 1002);
	assert_int_equal(ng_flowring_get(&r, 3)->seq, 3);
	assert_int_equal(ng_flowring_since(&r, 1005), 6);
	assert_int_equal(ng_flowring_since(&r, 9999), 11);
	assert_int_equal(ng_flowcursor_next(&r, &c)->seq, 1);
	assert_int_equal(c.missed, 0);
	/* The ring wraps past the cursor: it is told how many it missed. */
	for (int i = 0; i < NG_FLOW_RING; i++) {
		e = ev_at(2000 + i, "web", "egress");
		ng_flowring_push(&r, &e);
	}
	assert_int_equal(ng_flowring_oldest(&r), 11);
	assert_null(ng_flowring_get(&r, 10));
	assert_int_equal(ng_flowcursor_next(&r, &c)->seq, 11);
	assert_int_equal(c.missed, 9); /* 2..10 */
	assert_int_equal(ng_flowring_since(&r, 0), 11);
	ng_flowring_free(&r);
}

static void test_queue(void **state)
{
	(void)state;
	struct ng_flowq *q = calloc(1, sizeof(*q));
	struct ng_flow_ev e = ev_at(1, "web", NG_FLOW_DNS), got;
	uint64_t n;
	int pushed = 0;

	assert_non_null(q);
	assert_int_equal(ng_flowq_init(q), 0);
	assert_false(ng_flowq_pop(q, &got));
	while (ng_flowq_push(q, &e))
		pushed++;
	assert_int_equal(pushed, NG_FLOWQ);
	assert_false(ng_flowq_push(q, &e));
	assert_int_equal(ng_flowq_take_dropped(q), 2);
	assert_int_equal(ng_flowq_take_dropped(q), 0);
	/* The consumer's wake-up: readable. */
	assert_int_equal(read(q->wake_fd, &n, sizeof(n)), (ssize_t)sizeof(n));
	assert_true(n > 0);
	for (int i = 0; i < NG_FLOWQ; i++)
		assert_true(ng_flowq_pop(q, &got));
	assert_false(ng_flowq_pop(q, &got));
	assert_string_equal(got.category, NG_FLOW_DNS);
	assert_true(ng_flowq_push(q, &e));
	ng_flowq_close(q);
	free(q);
}

static void test_tokens(void **state)
{
	(void)state;
	struct ng_tokens t = {0};
	int ok = 0;

	/* burst 3 at once, then 2 a second */
	for (int i = 0; i < 10; i++)
		ok += ng_tokens_take(&t, 2, 3, 1000);
	assert_int_equal(ok, 3);
	assert_false(ng_tokens_take(&t, 2, 3, 1400));
	assert_true(ng_tokens_take(&t, 2, 3, 1500));
	assert_false(ng_tokens_take(&t, 2, 3, 1500));
	/* idle long: never more than the burst */
	ok = 0;
	for (int i = 0; i < 10; i++)
		ok += ng_tokens_take(&t, 2, 3, 100000);
	assert_int_equal(ok, 3);
}

/* The lines a client has queued, as one string. */
static char *queued(struct ng_flowclient *c)
{
	char *s = calloc(1, c->len - c->off + 1);

	memcpy(s, c->out + c->off, c->len - c->off);
	return s;
}

static struct ng_flowclient *client(int *peer, const char *request)
{
	int sv[2];
	struct ng_flowclient *c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c = ng_flowclient_new(sv[0], 7, 0);
	assert_non_null(c);
	assert_int_equal(c->tag, 7);
	*peer = sv[1];
	assert_int_equal(write(sv[1], request, strlen(request)), (ssize_t)strlen(request));
	return c;
}

static void test_client(void **state)
{
	(void)state;
	struct ng_flowring r;
	struct ng_flow_ev e;
	struct ng_flowclient *c;
	int peer;
	char *s, buf[4096];

	assert_int_equal(ng_flowring_init(&r), 0);
	e = ev_at(1000, "web", "egress");
	ng_flowring_push(&r, &e);
	e = ev_at(2000, "db", "egress");
	ng_flowring_push(&r, &e);
	e = ev_at(3000, "web", "metadata");
	ng_flowring_push(&r, &e);

	/* History of one pod, no follow: its lines, then done. */
	c = client(&peer, "{\"op\":\"observe\",\"pod\":\"sandboxes/web\",\"history\":true,\"since_ms\":0}\n");
	assert_int_equal(ng_flowclient_read_request(c), 1);
	ng_flowclient_start(c, &r, "{\"event\":\"start\"}");
	ng_flowclient_fill(c, &r, 5000);
	assert_true(c->closing);
	s = queued(c);
	assert_non_null(strstr(s, "{\"event\":\"start\"}\n"));
	assert_non_null(strstr(s, "\"pod_name\":\"web\""));
	assert_null(strstr(s, "\"pod_name\":\"db\""));
	assert_non_null(strstr(s, "\"category\":\"metadata\""));
	free(s);
	assert_int_equal(ng_flowclient_flush(c), 1);
	assert_true(read(peer, buf, sizeof(buf)) > 0);
	ng_flowclient_free(c);
	close(peer);

	/* Follow from now, category egress: only what comes later. */
	c = client(&peer, "{\"op\":\"observe\",\"category\":\"egress\",\"follow\":true}\n");
	assert_int_equal(ng_flowclient_read_request(c), 1);
	ng_flowclient_start(c, &r, "{}");
	ng_flowclient_fill(c, &r, 5000);
	assert_false(c->closing);
	assert_int_equal(c->len - c->off, 3); /* "{}\n" only */
	e = ev_at(4000, "web", "metadata");
	ng_flowring_push(&r, &e);
	e = ev_at(4001, "web", "egress");
	ng_flowring_push(&r, &e);
	ng_flowclient_fill(c, &r, 5000);
	s = queued(c);
	assert_null(strstr(s, "\"category\":\"metadata\""));
	assert_non_null(strstr(s, "\"category\":\"egress\""));
	free(s);
	/* It stops reading; the ring goes round: told what it missed, after
	 * what it had. */
	for (int i = 0; i < 2 * NG_FLOW_RING; i++) {
		e = ev_at(5000 + i, "web", "egress");
		ng_flowring_push(&r, &e);
	}
	c->off = c->len = 0; /* as if written */
	c->cur.next = 6;     /* where it stood */
	ng_flowclient_fill(c, &r, 9000);
	s = queued(c);
	assert_non_null(strstr(s, "\"event\":\"dropped\""));
	assert_true(c->dropped > 0);
	assert_true(c->len - c->off <= NG_FLOWCLIENT_OUT + 1024); /* bounded */
	free(s);
	ng_flowclient_free(c);
	close(peer);

	/* A request that is not one: an error line, then closed. */
	c = client(&peer, "{\"op\":\"rm -rf\"}\n");
	assert_int_equal(ng_flowclient_read_request(c), -1);
	assert_true(c->closing);
	s = queued(c);
	assert_non_null(strstr(s, "\"event\":\"error\""));
	free(s);
	ng_flowclient_free(c);
	close(peer);
	/* Nothing yet, then the peer gone. */
	c = client(&peer, "");
	fcntl(c->fd, F_SETFL, O_NONBLOCK);
	assert_int_equal(ng_flowclient_read_request(c), 0);
	close(peer);
	assert_int_equal(ng_flowclient_read_request(c), -1);
	ng_flowclient_free(c);
	ng_flowring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_client),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
