/* The transport's requests and dumps (kernel/nl.c) against the fake
 * socket: a request reads exactly its replies, to its ack; the kernel's
 * refusal is an errno the caller can test; late replies to earlier
 * requests and datagrams from any sender but the kernel are never taken
 * for an answer, and a flood of them ends the read instead of holding it;
 * a dump the kernel marks interrupted is read to its end (so the socket
 * can dump again at once) and said to be interrupted; a dump that ends in
 * an error says so; EBUSY (a dump still running on the socket) is drained
 * and asked again, boundedly; a callback's NG_NL_STOP leaves the rest to
 * the next dump's drain. */
#include "fake_kernel.h"

#include <linux/rtnetlink.h>

/* What the fake kernel answers the next request with. */
enum script {
	ACK,
	REFUSE, /* EPERM, with an extended ack */
	STALE_AND_FORGED /* an old reply and a forged error first, then the ack */,
	DUMP,       /* three messages, then DONE */
	DUMP_INTR,  /* the last two marked interrupted */
	DUMP_FAILS, /* DONE carrying -ENOBUFS */
	NOT_THERE,  /* ENOENT */
	BUSY,       /* EBUSY (a dump still runs on the socket), `busy` times, then DUMP */
};

struct world {
	enum script script;
	struct fsock sock;
	struct ng_nl nl;
	int seen; /* messages the callback was given */
	int stop_after;
	int stop_code; /* what the callback returns at stop_after (0: -1) */
	int busy;      /* BUSY: EBUSY answers left */
	int requests;
};

static void put_msg(struct fsock *s, uint32_t seq, uint16_t flags)
{
	struct nlmsghdr *nlh = fs_msg(s, RTM_NEWLINK, flags, seq);

	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	fs_end(s, nlh);
}

static void answer(struct fsock *s, const struct nlmsghdr *req)
{
	struct world *w = s->world;
	uint32_t seq = req->nlmsg_seq;
	struct nlmsghdr *nlh;
	int *e;

	fs_dgram(s, 0);
	w->requests++;
	if (w->script == BUSY) {
		if (w->busy-- > 0) {
			fs_ack(s, seq, EBUSY);
			return; /* BUSY again for the next request */
		}
		w->script = DUMP;
	}
	switch (w->script) {
	case ACK: fs_ack(s, seq, 0); break;
	case BUSY: break;
	case REFUSE:
		nlh = fs_msg(s, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, seq);
		((struct nlmsgerr *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct nlmsgerr)))->error = -EPERM;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "not your neighbour");
		fs_end(s, nlh);
		break;
	case STALE_AND_FORGED:
		fs_ack(s, seq - 1, EINVAL); /* a late answer to the request before */
		fs_dgram(s, FS_FORGER);
		fs_ack(s, seq, EPERM);
		fs_dgram(s, 0);
		fs_ack(s, seq, 0);
		break;
	case DUMP:
	case DUMP_INTR:
		for (int i = 0; i < 3; i++) {
			if (i > 0) /* one message a datagram */
				fs_dgram(s, 0);
			put_msg(s, seq,
				NLM_F_MULTI | (w->script == DUMP_INTR && i > 0 ? NLM_F_DUMP_INTR : 0));
		}
		fs_dgram(s, 0);
		fs_done(s, seq, w->script == DUMP_INTR ? NLM_F_DUMP_INTR : 0);
		break;
	case DUMP_FAILS:
		put_msg(s, seq, NLM_F_MULTI);
		nlh = fs_msg(s, NLMSG_DONE, NLM_F_MULTI, seq);
		e = mnl_nlmsg_put_extra_header(nlh, sizeof(int));
		*e = -ENOBUFS;
		fs_end(s, nlh);
		break;
	case NOT_THERE: fs_ack(s, seq, ENOENT); break;
	}
	w->script = ACK; /* the next request is simply acked */
}

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	struct world *w = data;

	(void)nlh;
	if (++w->seen == w->stop_after)
		return w->stop_code ? w->stop_code : -1;
	return 0;
}

static struct world *world_new(int protocol)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->sock.answer = answer;
	w->sock.world = w;
	ng_nl_init_ops(&w->nl, &fs_ops, &w->sock);
	w->nl.protocol = protocol;
	return w;
}

static struct nlmsghdr *request(char *buf, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(memset(buf, 0, 256));

	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ndmsg));
	return nlh;
}

static void test_request(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_ROUTE);
	char buf[256] __attribute__((aligned(4)));
	struct ng_err err = {0};

	assert_int_equal(ng_nl_request(&w->nl, request(buf, 0), NULL, NULL, &err), 0);
	assert_true(fs_req(&w->sock, 0)->nlmsg_flags & NLM_F_ACK); /* the ack ends its replies */
	assert_int_equal(fs_req(&w->sock, 0)->nlmsg_seq, 1);
	assert_int_equal(w->nl.answer_errno, 0);

	/* Refused: the errno to test, the kernel's words to read. */
	w->script = REFUSE;
	assert_int_equal(ng_nl_request(&w->nl, request(buf, 0), NULL, NULL, &err), -1);
	assert_int_equal(w->nl.answer_errno, EPERM);
	assert_int_equal(err.code, NG_E_KERNEL);
	assert_string_equal(err.msg, "Operation not permitted: not your neighbour");
	assert_int_equal(fs_req(&w->sock, 1)->nlmsg_seq, 2);
	/* Then the socket is as good as new. */
	assert_int_equal(ng_nl_request(&w->nl, request(buf, 0), NULL, NULL, &err), 0);
	assert_int_equal(w->nl.answer_errno, 0);

	/* Our side failed: no errno of the kernel's. */
	w->sock.send_errno = ENOBUFS;
	assert_int_equal(ng_nl_request(&w->nl, request(buf, 0), NULL, NULL, &err), -1);
	assert_int_equal(w->nl.answer_errno, 0);
	assert_contains(err.msg, "rtnetlink request");
	free(w);
}

static void test_stale_and_forged(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_ROUTE);
	char buf[256] __attribute__((aligned(4)));
	struct ng_err err = {0};

	w->nl.seq = 10;
	w->script = STALE_AND_FORGED;
	assert_int_equal(ng_nl_request(&w->nl, request(buf, 0), NULL, NULL, &err), 0);
	assert_int_equal(w->sock.qhead, w->sock.qtail);
	free(w);
}

static void test_foreign_flood_bounded(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_NETFILTER);
	char buf[8192] __attribute__((aligned(4)));

	/* 70 datagrams from a forger, then one of the kernel's: a read gives
	 * up (EAGAIN) after 64 foreign ones, the next reads on. */
	for (int i = 0; i < 70; i++) {
		fs_dgram(&w->sock, FS_FORGER);
		fs_ack(&w->sock, 1, 0);
	}
	fs_dgram(&w->sock, NG_NL_NO_SENDER); /* no sender address at all: foreign too */
	fs_ack(&w->sock, 1, 0);
	fs_dgram(&w->sock, 0);
	fs_ack(&w->sock, 7, 0);
	errno = 0;
	assert_int_equal(ng_nl_recv(&w->nl, buf, sizeof(buf), 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(w->sock.qhead, 64);
	assert_true(ng_nl_recv(&w->nl, buf, sizeof(buf), 0) > 0);
	assert_int_equal(((const struct nlmsghdr *)buf)->nlmsg_seq, 7);
	assert_int_equal(w->sock.qhead, w->sock.qtail);
	free(w);
}

static void test_dumps(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_ROUTE);
	char buf[256] __attribute__((aligned(4)));
	struct ng_err err = {0};

	w->script = DUMP;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), 0);
	assert_int_equal(w->seen, 3);

	/* Interrupted: the rest is read (nothing left behind for the next
	 * dump to meet), never handed to the callback, and said. */
	w->seen = 0;
	w->script = DUMP_INTR;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), -EINTR);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "the links or addresses changed during the dump");
	assert_int_equal(w->seen, 1);
	assert_int_equal(w->sock.qhead, w->sock.qtail);

	/* The callback stops it: the rest is read all the same. */
	w->seen = 0;
	w->stop_after = 2;
	w->script = DUMP;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), -1);
	assert_int_equal(w->seen, 2);
	assert_int_equal(w->sock.qhead, w->sock.qtail);

	/* A dump the kernel gave up on part way (DONE carries its errno). */
	w->script = DUMP_FAILS;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), NULL, NULL, &err), -1);
	assert_int_equal(w->nl.answer_errno, ENOBUFS);
	assert_contains(err.msg, "rtnetlink dump: No buffer space available");

	/* No such object: -ENOENT, nothing said (the callers' "not there"). */
	w->script = NOT_THERE;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_ACK), NULL, NULL, &err), -ENOENT);
	assert_int_equal(err.code, 0);
	free(w);
}

static void test_busy_and_stop(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_NETFILTER);
	char buf[256] __attribute__((aligned(4)));
	struct ng_err err = {0};

	/* EBUSY (another dump still runs on this socket): drained and asked
	 * again, a bounded number of times. */
	w->script = BUSY;
	w->busy = 2;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), 0);
	assert_int_equal(w->requests, 3);
	assert_int_equal(w->seen, 3);
	w->requests = w->seen = 0;
	w->script = BUSY;
	w->busy = 1000;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), -1);
	assert_int_equal(w->requests, NG_NL_BUSY_TRIES);
	assert_int_equal(w->nl.answer_errno, EBUSY);

	/* NG_NL_STOP: reading stops at once, the rest stays with the kernel;
	 * the next dump on the socket drains it before it asks. */
	w->script = DUMP;
	w->requests = w->seen = 0;
	w->stop_after = 1;
	w->stop_code = NG_NL_STOP;
	memset(&err, 0, sizeof(err));
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), 0);
	assert_int_equal(w->seen, 1);
	assert_true(w->nl.dump_left);
	assert_true(w->sock.qhead != w->sock.qtail);
	w->seen = 0;
	w->stop_after = 0;
	w->script = DUMP;
	assert_int_equal(ng_nl_dump(&w->nl, request(buf, NLM_F_DUMP), count_cb, w, &err), 0);
	assert_int_equal(w->seen, 3);
	assert_false(w->nl.dump_left);
	assert_int_equal(w->sock.qhead, w->sock.qtail);
	free(w);
}

static int interrupted_twice(struct ng_nl *nl, void *data, struct ng_err *err)
{
	int *calls = data;

	(void)nl;
	assert_int_equal(err->code, 0); /* cleared before each try */
	if (++*calls > 2)
		return 0;
	ng_fail(err, NG_E_TRY_AGAIN, "interrupted");
	return -EINTR;
}

static int always_interrupted(struct ng_nl *nl, void *data, struct ng_err *err)
{
	(void)nl;
	(void)err;
	++*(int *)data;
	return -EINTR;
}

static void test_read_again(void **state)
{
	(void)state;
	struct world *w = world_new(NETLINK_ROUTE);
	struct ng_err err = {0};
	int calls = 0;

	assert_int_equal(ng_nl_read_again(&w->nl, interrupted_twice, &calls, &err), 0);
	assert_int_equal(calls, 3);
	calls = 0;
	assert_int_equal(ng_nl_read_again(&w->nl, always_interrupted, &calls, &err), -EINTR);
	assert_int_equal(calls, NG_NL_READ_TRIES);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_stale_and_forged),
		cmocka_unit_test(test_foreign_flood_bounded),
		cmocka_unit_test(test_dumps),
		cmocka_unit_test(test_read_again),
		cmocka_unit_test(test_busy_and_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
