/* The pod's queries (agent/query.h) without root: a pod made by hand, its
 * queue's packets built byte for byte; the raw sockets are absent (the
 * answers the agent would write are tested in e2e/dnsquery.sh, their bytes
 * in test_pktbuild.c and test_dnsquery.c). */
#include "testutil.h"

#include <linux/netfilter.h>

#include "agent/answer.h"
#include "agent/pktbuild.h"
#include "agent/query.h"
#include "dnsmsg.h"
#include "policy/annotations.h"
#include "spec/prevresult.h"

#define IFINDEX 7
#define PREV    "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\"}]}"

struct world {
	struct ng_pod *p;
	struct ng_pod_shared sh;
	struct ng_answer_scratch s;
};

static void policy(struct ng_policy *pol, const char *queries)
{
	struct ng_config cfg;
	struct ng_annotations ann = {0};
	struct ng_prev prev = {0};
	struct ng_err err = {0};
	char dns[256];
	json_t *root = tu_conf_with("egress", "{\"names\":\"learn\",\"allow\":[\"s3.example.com:443\"]}"),
	       *pj;

	snprintf(dns, sizeof(dns),
		 "{\"servers\":[\"10.96.0.10\",\"fd00:10:96::a\"],\"queries\":\"%s\","
		 "\"alwaysAllowed\":[\"*.svc.cluster.local\"]}",
		 queries);
	json_object_set_new(root, "dns", tu_json(dns));
	if (!strcmp(queries, "any"))
		json_object_del(json_object_get(root, "dns"), "alwaysAllowed");
	pj = tu_json(PREV);
	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(ng_prev_parse(pj, &prev, &err), 0);
	assert_int_equal(ng_policy_compile(&cfg, &ann, &prev, NULL, NULL, pol, &err), 0);
	assert_true(pol->learn);
	ng_prev_free(&prev);
	ng_config_free(&cfg);
	json_decref(root);
	json_decref(pj);
}

static int setup_with(void **state, const char *queries)
{
	struct world *w = calloc(1, sizeof(*w));
	struct ng_pod *p = calloc(1, sizeof(*p));

	assert_non_null(w);
	assert_non_null(p);
	p->q.fd = p->nl.fd = p->raw.fd4 = p->raw.fd6 = -1;
	snprintf(p->key, sizeof(p->key), "c0ffee@eth0");
	p->ifindex = IFINDEX;
	policy(&p->policy, queries);
	assert_int_equal(ng_answer_scratch_init(&w->s), 0);
	w->p = p;
	*state = w;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, "listed");
}

static int setup_any(void **state)
{
	return setup_with(state, "any");
}

static int teardown(void **state)
{
	struct world *w = *state;

	ng_pod_free(w->p, &w->sh);
	assert_int_equal(w->sh.tcp_budget, 0);
	ng_answer_scratch_free(&w->s);
	free(w);
	return 0;
}

/* ---- messages and packets ------------------------------------------------------ */

static void query(struct tu_dns *m, uint16_t id, const char *name)
{
	m->n = 0;
	tu_put16(m, id);
	tu_put16(m, 0x0100);
	tu_put16(m, 1);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, name);
	tu_put16(m, 1);
	tu_put16(m, 1);
}

struct pkt {
	uint8_t b[4096];
	struct ng_nfq_packet q;
};

static struct ng_ip ip(const char *s)
{
	struct ng_ip a;

	assert_int_equal(ng_ip_parse(s, &a), 0);
	return a;
}

/* From the pod (port 40000) to `to`:53, as the egress chain queues it. */
static void out_pkt(struct pkt *k, const char *to, uint8_t proto, uint32_t seq, uint8_t flags,
		    const uint8_t *pl, size_t len)
{
	struct ng_pktspec s = {.src = ip(strchr(to, ':') ? "fd00:244:1::5" : "10.244.1.5"),
			       .dst = ip(to),
			       .proto = proto,
			       .sport = 40000,
			       .dport = 53,
			       .seq = seq,
			       .ack = 9001,
			       .flags = flags};
	size_t n = ng_pkt_build(&s, pl, len, k->b, sizeof(k->b));

	assert_true(n > 0);
	k->q = (struct ng_nfq_packet){
		.id = 1, .hook = NF_INET_LOCAL_OUT, .outdev = IFINDEX, .data = k->b, .len = n};
}

/* Another source port for the packet out_pkt built (the TCP checksum is
 * not checked by the agent). */
static void put_port(struct pkt *k, uint16_t port)
{
	size_t ih = (k->b[0] >> 4) == 4 ? 20 : 40;

	k->b[ih] = (uint8_t)(port >> 8);
	k->b[ih + 1] = (uint8_t)port;
}

static uint32_t verdict(struct world *w, struct pkt *k, uint32_t id)
{
	k->q.id = id;
	return ng_answer_packet(w->p, &w->sh, &w->s, &k->q);
}

static struct tu_dns m;

static void udp_q(struct world *w, struct pkt *k, const char *name, uint32_t want)
{
	query(&m, 0x1234, name);
	out_pkt(k, "10.96.0.10", 17, 0, 0, m.b, m.n);
	assert_int_equal(verdict(w, k, 1), want);
}

/* ---- the cases ---------------------------------------------------------------- */

static void test_udp_listed_and_not(void **state)
{
	struct world *w = *state;
	struct pkt k;

	udp_q(w, &k, "s3.example.com", NF_ACCEPT);
	assert_int_equal(w->p->oq.n, 1);
	/* The same question in other case, same ID and port: the same
	 * outstanding query (renewed). */
	udp_q(w, &k, "S3.EXAMPLE.com", NF_ACCEPT);
	assert_int_equal(w->p->oq.n, 1);
	udp_q(w, &k, "kube-dns.kube-system.svc.cluster.local", NF_ACCEPT);
	assert_int_equal(w->p->oq.n, 2);
	/* Unlisted, a search candidate of a listed name, a suffix of one. */
	udp_q(w, &k, "leak.example", NF_DROP);
	udp_q(w, &k, "s3.example.com.sandboxes.svc.cluster.local", NF_ACCEPT); /* alwaysAllowed */
	udp_q(w, &k, "s3.example.com.node.internal", NF_DROP);
	udp_q(w, &k, "example.com", NF_DROP);
	assert_int_equal(w->p->c.queries, 7);
	assert_int_equal(w->p->c.refused, 3);
	assert_int_equal(w->p->oq.n, 3);
	/* Not a query: a response sent to the resolver; garbage. */
	query(&m, 1, "s3.example.com");
	m.b[2] |= 0x80;
	out_pkt(&k, "10.96.0.10", 17, 0, 0, m.b, m.n);
	assert_int_equal(verdict(w, &k, 1), NF_DROP);
	out_pkt(&k, "10.96.0.10", 17, 0, 0, (const uint8_t *)"x", 1);
	assert_int_equal(verdict(w, &k, 1), NF_DROP);
	/* Not to a resolver of the pod's: not ours to pass (a queue rule of
	 * the pod's own in the output hook): foreign. */
	query(&m, 1, "s3.example.com");
	out_pkt(&k, "10.96.0.99", 17, 0, 0, m.b, m.n);
	assert_int_equal(verdict(w, &k, 1), NF_DROP);
	assert_int_equal(w->p->c.refused, 5);
	assert_int_equal(w->p->c.foreign, 1);
	/* Queued on another interface (a rule of the pod's own): foreign. */
	udp_q(w, &k, "s3.example.com", NF_ACCEPT);
	k.q.outdev = 1;
	assert_int_equal(verdict(w, &k, 1), NF_DROP);
	assert_int_equal(w->p->c.foreign, 2);
}

static void test_udp_any_lets_all_go_but_remembers(void **state)
{
	struct world *w = *state;
	struct pkt k;

	udp_q(w, &k, "leak.example", NF_ACCEPT);
	assert_int_equal(w->p->c.refused, 0);
	assert_int_equal(w->p->oq.n, 1);
}

/* Framed for TCP. */
static size_t framed(uint8_t *out, uint16_t id, const char *name)
{
	query(&m, id, name);
	out[0] = (uint8_t)(m.n >> 8);
	out[1] = (uint8_t)m.n;
	memcpy(out + 2, m.b, m.n);
	return m.n + 2;
}

static void test_tcp_messages_held_until_whole(void **state)
{
	struct world *w = *state;
	uint8_t st[1024];
	size_t a = framed(st, 1, "s3.example.com"), b;
	struct pkt k;

	b = a + framed(st + a, 2, "kube.ns.svc.cluster.local");
	/* Bytes of no known connection: dropped; the SYN opens one. */
	out_pkt(&k, "10.96.0.10", 6, 1001, NG_TCP_ACK, st, a);
	assert_int_equal(verdict(w, &k, 1), NF_DROP);
	out_pkt(&k, "10.96.0.10", 6, 1000, NG_TCP_SYN, NULL, 0);
	assert_int_equal(verdict(w, &k, 1), NF_ACCEPT);
	/* Two allowed messages, the second cut: the first segment is held
	 * (it carries the start of a message not yet judged)... */
	out_pkt(&k, "10.96.0.10", 6, 1001, NG_TCP_ACK, st, a + 5);
	assert_int_equal(verdict(w, &k, 2), NG_VERDICT_HELD);
	assert_int_equal(w->p->qtcp.f[0].n_held, 1);
	/* ...its retransmission too (the held one will carry the bytes)... */
	assert_int_equal(verdict(w, &k, 3), NF_DROP);
	/* ...until the rest comes: both go (the held one's verdict is sent). */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + a + 5), NG_TCP_ACK, st + a + 5, b - a - 5);
	assert_int_equal(verdict(w, &k, 4), NF_ACCEPT);
	assert_int_equal(w->p->qtcp.f[0].n_held, 0);
	assert_int_equal(w->p->oq.n, 2);
	assert_int_equal(w->p->c.queries, 2);
	/* A retransmission of what went: passes. */
	out_pkt(&k, "10.96.0.10", 6, 1001, NG_TCP_ACK, st, a);
	assert_int_equal(verdict(w, &k, 5), NF_ACCEPT);
	/* A bare ACK and the 2-byte length alone: passed, held. */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b), NG_TCP_ACK, NULL, 0);
	assert_int_equal(verdict(w, &k, 6), NF_ACCEPT);
	a = framed(st, 3, "leak.example");
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b), NG_TCP_ACK, st, 2);
	assert_int_equal(verdict(w, &k, 7), NG_VERDICT_HELD);
	/* A FIN now would strand it: dropped (sent again after). */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b + 2), NG_TCP_ACK | NG_TCP_FIN, NULL, 0);
	assert_int_equal(verdict(w, &k, 8), NF_DROP);
	/* The message, unlisted: dropped, the connection ended. */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b + 2), NG_TCP_ACK, st + 2, a - 2);
	assert_int_equal(verdict(w, &k, 9), NF_DROP);
	assert_int_equal(w->p->c.refused, 1);
	assert_true(w->p->qtcp.f[0].refused);
	assert_int_equal(w->p->qtcp.f[0].n_held, 0);
	/* Everything after: dropped, either side; a reset of ours passes. */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b + a), NG_TCP_ACK, st, a);
	assert_int_equal(verdict(w, &k, 10), NF_DROP);
	assert_false(w->p->qtcp.f[0].used); /* answered with a reset: the slot is free */
	out_pkt(&k, "10.96.0.10", 6, (uint32_t)(1001 + b), NG_TCP_RST, NULL, 0);
	assert_int_equal(verdict(w, &k, 11), NF_ACCEPT);
	{
		struct ng_pktspec s = {.src = ip("10.96.0.10"),
				       .dst = ip("10.244.1.5"),
				       .proto = 6,
				       .sport = 53,
				       .dport = 40000,
				       .seq = 9001,
				       .flags = NG_TCP_ACK};
		size_t n = ng_pkt_build(&s, st, 20, k.b, sizeof(k.b));

		k.q = (struct ng_nfq_packet){
			.id = 12, .hook = NF_INET_LOCAL_IN, .indev = IFINDEX, .data = k.b, .len = n};
		assert_int_equal(ng_answer_packet(w->p, &w->sh, &w->s, &k.q), NF_DROP);
	}
	/* A new connection on the same ports: judged afresh. */
	out_pkt(&k, "10.96.0.10", 6, 5000, NG_TCP_SYN, NULL, 0);
	assert_int_equal(verdict(w, &k, 13), NF_ACCEPT);
	assert_false(w->p->qtcp.f[0].refused);
	a = framed(st, 4, "s3.example.com");
	out_pkt(&k, "10.96.0.10", 6, 5001, NG_TCP_ACK, st, a);
	assert_int_equal(verdict(w, &k, 14), NF_ACCEPT);
}

static void test_tcp_pipelined_refusal_drops_the_segment(void **state)
{
	struct world *w = *state;
	uint8_t st[1024];
	size_t n = framed(st, 1, "s3.example.com");
	struct pkt k;

	n += framed(st + n, 2, "leak.example");
	n += framed(st + n, 3, "s3.example.com");
	out_pkt(&k, "fd00:10:96::a", 6, 1000, NG_TCP_SYN, NULL, 0);
	assert_int_equal(verdict(w, &k, 1), NF_ACCEPT);
	out_pkt(&k, "fd00:10:96::a", 6, 1001, NG_TCP_ACK | 0x08, st, n);
	assert_int_equal(verdict(w, &k, 2), NF_DROP);
	assert_int_equal(w->p->c.refused, 1);
	assert_int_equal(w->p->c.queries, 2); /* judged up to the refused one */
}

/* Refused connections give their slots back: more of them than there are
 * slots, one after the other, each closed by the pod. */
static void test_tcp_refusals_free_their_slots(void **state)
{
	struct world *w = *state;
	uint8_t st[512];
	size_t n = framed(st, 1, "leak.example");
	struct pkt k;

	for (unsigned i = 0; i < 3 * NG_TCP_FLOWS; i++) {
		uint32_t isn = 1000 * (i + 1);

		out_pkt(&k, "10.96.0.10", 6, isn, NG_TCP_SYN, NULL, 0);
		put_port(&k, (uint16_t)(30000 + i));
		assert_int_equal(verdict(w, &k, 1), NF_ACCEPT);
		out_pkt(&k, "10.96.0.10", 6, isn + 1, NG_TCP_ACK, st, n);
		put_port(&k, (uint16_t)(30000 + i));
		assert_int_equal(verdict(w, &k, 2), NF_DROP);
		out_pkt(&k, "10.96.0.10", 6, (uint32_t)(isn + 1 + n), NG_TCP_ACK | NG_TCP_FIN, NULL, 0);
		put_port(&k, (uint16_t)(30000 + i));
		assert_int_equal(verdict(w, &k, 3), NF_DROP);
	}
	assert_int_equal(w->p->c.refused, 3 * NG_TCP_FLOWS);
	for (int i = 0; i < NG_TCP_FLOWS; i++)
		assert_false(w->p->qtcp.f[i].used);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_udp_listed_and_not, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_any_lets_all_go_but_remembers, setup_any, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_messages_held_until_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_pipelined_refusal_drops_the_segment, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tcp_refusals_free_their_slots, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
