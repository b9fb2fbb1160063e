/* The learner's packet decision (agent/answer.h) without root: a pod made
 * by hand with injected netlink transports over the fake kernel (its own
 * namespace's and the node's), queued packets built byte by byte, the
 * verdict read from ng_answer_packet. Packets our chain did not queue are
 * dropped and counted before anything is read; other senders pass
 * untouched; a resolver's UDP answer is committed to both sides before it
 * is accepted, and dropped (the tracker reverted) when the kernel refuses;
 * DNS over TCP holds only the segment that completes a message. The node
 * side learns only what the observer (fed NFLOG copies by hand here) saw
 * answer a query on the host peer: an answer it never saw teaches the
 * pod's tables alone. */
#include "../kernel/fake_setelems.h"

#include <linux/netfilter.h>

#include "agent/answer.h"
#include "agent/outq.h"
#include "base/clock.h"
#include "nft/render.h"
#include "dnsmsg.h"
#include "policy/annotations.h"
#include "spec/prevresult.h"

#define IFINDEX 7
#define HOSTIDX 31 /* the pod's host peer, in the node's namespace */
#define HOST    "ngh.c0ffee.eth0"
#define PREV    "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\"}]}"

/* ---- a pod and its two namespaces ------------------------------------------ */

struct world {
	struct ng_pod *p;
	struct ng_pod_shared sh;
	struct ng_answer_scratch s;
	struct se_log pod, node; /* what each namespace was sent */
	struct ng_nl node_nl;
	struct ng_observer obs;
};

static void learn_policy(struct ng_policy *pol)
{
	struct ng_config cfg;
	struct ng_annotations ann = {0};
	struct ng_prev prev = {0};
	struct ng_err err = {0};
	json_t *root = tu_conf_with("egress",
				    "{\"names\":\"learn\",\"minNameTTL\":60,"
				    "\"allow\":[\"s3.example.com:443\",\"tcp://10.20.0.0/16:443\"]}"),
	       *pj = tu_json(PREV);

	assert_int_equal(ng_config_parse(root, &cfg, &err), 0);
	assert_int_equal(ng_prev_parse(pj, &prev, &err), 0);
	assert_int_equal(ng_policy_compile(&cfg, &ann, &prev, NULL, NULL, pol, &err), 0);
	assert_true(pol->learn);
	ng_prev_free(&prev);
	ng_config_free(&cfg);
	json_decref(root);
	json_decref(pj);
}

static void add_table(struct ng_pod *p, bool in_node, uint8_t family, const char *name)
{
	struct ng_learned_table t = {.in_node = in_node, .family = family};

	snprintf(t.name, sizeof(t.name), "%s", name);
	assert_int_equal(ng_vec_push(&p->tables, &t), 0);
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct ng_pod *p = calloc(1, sizeof(*p));

	assert_non_null(w);
	assert_non_null(p);
	p->q.fd = -1;
	snprintf(p->key, sizeof(p->key), "c0ffee@eth0");
	snprintf(p->pod.ifname, sizeof(p->pod.ifname), "eth0");
	p->ifindex = IFINDEX;
	learn_policy(&p->policy);
	snprintf(p->policy.pod, sizeof(p->policy.pod), "sandboxes/web");
	ng_render_set_specs(&p->policy, p->sets);
	add_table(p, false, NFPROTO_INET, NG_TABLE);
	add_table(p, true, NFPROTO_NETDEV, HOST);
	se_open(&w->pod, p->sets, &p->nl);
	se_open(&w->node, p->sets, &w->node_nl);
	w->sh.node_nl = &w->node_nl;
	assert_int_equal(ng_observer_init(&w->obs), 0);
	w->sh.obs = &w->obs;
	p->node_side = true;
	p->nodeseen.host_ifindex = HOSTIDX;
	assert_int_equal(ng_observer_add(&w->obs, &p->nodeseen), 0);
	assert_int_equal(ng_answer_scratch_init(&w->s), 0);
	w->p = p;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	ng_pod_free(w->p, &w->sh);
	assert_int_equal(w->sh.tcp_budget, 0); /* every flow's bytes given back */
	assert_int_equal(w->obs.tcp_budget, 0);
	assert_int_equal(w->obs.pods.n, 0);
	ng_observer_close(&w->obs);
	ng_answer_scratch_free(&w->s);
	se_close(&w->pod);
	se_close(&w->node);
	free(w);
	return 0;
}

/* ---- DNS answers and the packets that carry them ----------------------------- */

/* "q IN A" answered by one record per address (A or AAAA), `ttl` s. */
static void answer(struct tu_dns *m, const char *q, const char *const *ips, unsigned n, uint32_t ttl)
{
	m->n = 0;
	tu_put16(m, 0x4242);
	tu_put16(m, 0x8180);
	tu_put16(m, 1);
	tu_put16(m, n);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, q);
	tu_put16(m, 1);
	tu_put16(m, 1);
	for (unsigned i = 0; i < n; i++) {
		struct ng_ip ip;

		assert_int_equal(ng_ip_parse(ips[i], &ip), 0);
		tu_ptr(m, 12);
		tu_put16(m, ip.fam == NG_V4 ? 1 : 28);
		tu_put16(m, 1);
		tu_put32(m, ttl);
		tu_put16(m, (unsigned)ng_ip_len(ip.fam));
		tu_put(m, ip.a, (size_t)ng_ip_len(ip.fam));
	}
}

struct pkt {
	uint8_t b[2048];
	size_t n;
	struct ng_nfq_packet q;
};

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* An IP packet from src:sport to the pod's 10.244.1.5 (or fd00::5):
 * proto 17 (UDP) or 6 (TCP, seq and flags), carrying `pl`, as our chain
 * queues it (input hook, in on the pod's interface). */
static void packet_between(struct pkt *k, const char *src, const char *dst, uint16_t sport, uint16_t dport,
			   uint8_t proto, uint32_t seq, uint8_t flags, const uint8_t *pl, size_t pl_len)
{
	struct ng_ip s, d;
	size_t ih, th = proto == 17 ? 8 : 20;
	uint8_t *t;

	memset(k, 0, sizeof(*k));
	assert_int_equal(ng_ip_parse(src, &s), 0);
	assert_int_equal(ng_ip_parse(dst, &d), 0);
	if (s.fam == NG_V4) {
		ih = 20;
		k->b[0] = 0x45;
		put16(k->b + 2, (unsigned)(ih + th + pl_len));
		k->b[8] = 64;
		k->b[9] = proto;
		memcpy(k->b + 12, s.a, 4);
		memcpy(k->b + 16, d.a, 4);
	} else {
		ih = 40;
		k->b[0] = 0x60;
		put16(k->b + 4, (unsigned)(th + pl_len));
		k->b[6] = proto;
		k->b[7] = 64;
		memcpy(k->b + 8, s.a, 16);
		memcpy(k->b + 24, d.a, 16);
	}
	t = k->b + ih;
	put16(t, sport);
	put16(t + 2, dport);
	if (proto == 17) {
		put16(t + 4, (unsigned)(8 + pl_len));
	} else {
		put16(t + 4, seq >> 16);
		put16(t + 6, seq & 0xffff);
		t[12] = 5 << 4;
		t[13] = flags;
	}
	assert_true(ih + th + pl_len <= sizeof(k->b));
	if (pl_len)
		memcpy(t + th, pl, pl_len);
	k->n = ih + th + pl_len;
	k->q = (struct ng_nfq_packet){
		.id = 1, .hook = NF_INET_LOCAL_IN, .indev = IFINDEX, .data = k->b, .len = k->n};
}

static void packet(struct pkt *k, const char *src, uint16_t sport, uint8_t proto, uint32_t seq, uint8_t flags,
		   const uint8_t *pl, size_t pl_len)
{
	packet_between(k, src, strchr(src, ':') ? "fd00::5" : "10.244.1.5", sport, 40000, proto, seq, flags,
		       pl, pl_len);
}

/* ---- what the node saw, as NFLOG copies ------------------------------------------ */

/* The copy the host peer's egress hook makes of packet k on its way to
 * the pod: from the Ethernet header. */
static void node_sees_to_pod(struct world *w, const struct pkt *k)
{
	uint8_t frame[2100] = {0};
	struct ng_nflog_record r = {.group = NG_OBSERVE_GROUP, .outdev = HOSTIDX, .payload = frame};

	frame[12] = k->b[0] >> 4 == 4 ? 0x08 : 0x86;
	frame[13] = k->b[0] >> 4 == 4 ? 0x00 : 0xdd;
	memcpy(frame + 14, k->b, k->n);
	r.len = k->n + 14;
	ng_observer_record(&w->obs, &r, ng_mono_ms());
}

/* The copy the host peer's ingress hook makes of packet k from the pod:
 * from the IP header. */
static void node_sees_from_pod(struct world *w, const struct pkt *k)
{
	struct ng_nflog_record r = {
		.group = NG_OBSERVE_GROUP, .indev = HOSTIDX, .payload = k->b, .len = k->n};

	ng_observer_record(&w->obs, &r, ng_mono_ms());
}

/* The pod's query for q (ID 0x4242, type A) from port 40000 to `resolver`
 * over UDP, as the node saw it leave. */
static void node_sees_query(struct world *w, const char *resolver, const char *q)
{
	struct tu_dns *m = malloc(sizeof(*m));
	struct pkt k;

	assert_non_null(m);
	m->n = 0;
	tu_put16(m, 0x4242);
	tu_put16(m, 0x0100);
	tu_put16(m, 1);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, q);
	tu_put16(m, 1);
	tu_put16(m, 1);
	packet_between(&k, strchr(resolver, ':') ? "fd00::5" : "10.244.1.5", resolver, 40000, 53, 17, 0, 0,
		       m->b, m->n);
	node_sees_from_pod(w, &k);
	free(m);
}

/* The node saw the query for q and then answer k cross the host peer. */
static void node_sees(struct world *w, const char *resolver, const char *q, const struct pkt *k)
{
	node_sees_query(w, resolver, q);
	node_sees_to_pod(w, k);
}

static void udp_answer(struct pkt *k, const char *resolver, const char *q, const char *ip, uint32_t ttl)
{
	struct tu_dns *m = malloc(sizeof(*m));
	const char *ips[] = {ip};

	assert_non_null(m);
	answer(m, q, ips, 1, ttl);
	packet(k, resolver, 53, 17, 0, 0, m->b, m->n);
	free(m);
}

static uint32_t verdict(struct world *w, const struct pkt *k)
{
	return ng_answer_packet(w->p, &w->sh, &w->s, &k->q);
}

/* The pod asked `resolver` for "q IN A" (ID 0x4242, from port 40000):
 * the query the answers above answer, outstanding (agent/outq.h). */
static void asked(struct world *w, const char *resolver, uint8_t proto, const char *q)
{
	struct tu_dns *m = malloc(sizeof(*m));
	struct ng_outq_key key;
	struct ng_ip r;

	assert_non_null(m);
	m->n = 0;
	tu_put16(m, 0x4242);
	tu_put16(m, 0x0100);
	tu_put16(m, 1);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, q);
	tu_put16(m, 1);
	tu_put16(m, 1);
	assert_int_equal(ng_ip_parse(resolver, &r), 0);
	assert_int_equal(ng_outq_key_of(m->b, m->n, &r, proto, 40000, &key), 0);
	assert_int_equal(ng_outq_add(&w->p->oq, &key, ng_mono_ms()), 0);
	free(m);
}

/* The elements NEWSETELEM put into `set` of `table` over all batches of
 * one side. */
static int added(const struct se_log *l, const char *table, const char *set, const char *ip)
{
	int n = 0;

	for (int i = 0; i < l->n; i++)
		if (l->m[i].type == NFT_MSG_NEWSETELEM && !strcmp(l->m[i].table, table) &&
		    !strcmp(l->m[i].set, set) && se_find(&l->m[i], ip, 443) >= 0)
			n++;
	return n;
}

/* ---- the cases ------------------------------------------------------------------ */

static void test_foreign_packets_dropped_unread(void **state)
{
	struct world *w = *state;
	struct pkt k;

	/* A resolver's answer, but queued by a rule of the pod's own: in the
	 * output hook, then in the input hook on another interface. */
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.66", 300);
	k.q.hook = NF_INET_LOCAL_OUT;
	assert_int_equal(verdict(w, &k), NF_DROP);
	k.q.hook = NF_INET_LOCAL_IN;
	k.q.indev = 1; /* lo */
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(w->p->c.foreign, 2);
	assert_int_equal(w->p->c.dropped, 2);
	/* Never read: nothing parsed, tracked or sent. */
	assert_int_equal(w->p->c.answers, 0);
	assert_int_equal(ng_tracker_count(&w->p->tr), 0);
	assert_int_equal(w->pod.batches + w->node.batches, 0);
	/* Ours but unreadable: dropped, not foreign. */
	k.q.indev = IFINDEX;
	k.q.len = 10;
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(w->p->c.foreign, 2);
	assert_int_equal(w->p->c.dropped, 3);
}

static void test_other_senders_pass_untouched(void **state)
{
	struct world *w = *state;
	struct pkt k;

	/* Not a resolver of the pod's; a resolver, but not from port 53. */
	udp_answer(&k, "10.50.0.9", "s3.example.com", "10.66.0.66", 300);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.66", 300);
	put16(k.b + 20, 5353);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->p->c.answers, 0);
	assert_int_equal(w->p->c.dropped, 0);
	assert_int_equal(w->pod.batches + w->node.batches, 0);
}

static void test_udp_answer_committed_then_accepted(void **state)
{
	struct world *w = *state;
	struct pkt k;

	/* An answer to no query the pod sent: passed, nothing learned. */
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.50.0.5", 300);
	node_sees(w, "10.96.0.10", "s3.example.com", &k);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches + w->node.batches, 0);
	assert_int_equal(w->p->c.unmatched, 1);
	/* A query over TCP is not one over UDP, nor one to another resolver. */
	asked(w, "10.96.0.10", 6, "s3.example.com");
	asked(w, "10.96.0.11", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches + w->node.batches, 0);
	assert_int_equal(w->p->c.unmatched, 2);
	/* Asked (the name in another case): the answer teaches. */
	asked(w, "10.96.0.10", 17, "S3.Example.COM");
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	/* One transaction per namespace: the pod's table and the host side. */
	assert_int_equal(w->pod.batches, 1);
	assert_int_equal(w->node.batches, 1);
	assert_int_equal(added(&w->pod, NG_TABLE, "names_v4", "10.50.0.5"), 1);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.50.0.5"), 1);
	assert_int_equal(w->pod.m[0].timeout_ms[0], 300000);
	assert_int_equal(w->p->c.answers, 3);
	assert_int_equal(w->p->c.commits, 1);
	assert_int_equal(w->p->c.learned, 1);
	assert_int_equal(ng_tracker_count(&w->p->tr), 1);
	/* The same answer again: the query is answered, it teaches nothing
	 * more; asked again: known, nothing to commit. */
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->p->c.unmatched, 3);
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches, 1);
	/* An answer for a name the pod may not reach teaches nothing. */
	asked(w, "10.96.0.10", 17, "evil.test");
	udp_answer(&k, "10.96.0.10", "evil.test", "10.50.0.9", 300);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches, 1);
	/* Over IPv6 from the v6 resolver: names_v6. */
	asked(w, "fd00:10:96::a", 17, "s3.example.com");
	udp_answer(&k, "fd00:10:96::a", "s3.example.com", "fd00:50::5", 300);
	node_sees(w, "fd00:10:96::a", "s3.example.com", &k);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(added(&w->pod, NG_TABLE, "names_v6", "fd00:50::5"), 1);
	assert_int_equal(added(&w->node, HOST, "names_v6", "fd00:50::5"), 1);
	assert_int_equal(w->p->c.answers, 7);
	assert_int_equal(w->p->c.unmatched, 3);
	assert_int_equal(w->p->c.commits, 2);
	assert_int_equal(w->p->c.dropped, 0);
}

static void test_refused_commit_drops_and_reverts(void **state)
{
	struct world *w = *state;
	struct pkt k;

	/* The node refuses: the answer is dropped, the tracker forgets. */
	w->node.f->sc[0].refuse_errno = EPERM;
	asked(w, "10.96.0.10", 17, "s3.example.com");
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.50.0.7", 300);
	node_sees(w, "10.96.0.10", "s3.example.com", &k);
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(w->p->c.commit_errors, 1);
	assert_int_equal(w->p->c.dropped, 1);
	assert_int_equal(w->p->c.commits, 0);
	/* The pod's side took it first (its tracker says so), the node's
	 * tracker forgot. */
	assert_int_equal(ng_tracker_count(&w->p->tr), 1);
	assert_int_equal(ng_tracker_count(&w->p->tr_node), 0);
	/* The query is outstanding again (the answer never reached the
	 * pod): the client asks again and the kernel takes it: a plain add
	 * again (no delete: the tracker does not claim the element). */
	assert_int_equal(w->p->oq.n, 1);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->p->oq.n, 0);
	assert_int_equal(w->node.batches, 2);
	for (int i = 0; i < w->node.n; i++)
		assert_int_equal(w->node.m[i].type, NFT_MSG_NEWSETELEM);
	assert_int_equal(ng_tracker_count(&w->p->tr_node), 1);
	assert_int_equal(w->p->c.commits, 1);
}

/* What the node never saw teaches the pod's tables only, and over UDP the
 * answer is dropped: its address would be refused by the host side. */
static void test_node_side_learns_only_what_it_saw(void **state)
{
	struct world *w = *state;
	struct pkt k, real;

	/* Nothing seen at all (a pod looping its own forged answer). */
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.66", 300);
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(added(&w->pod, NG_TABLE, "names_v4", "10.66.0.66"), 1);
	assert_int_equal(w->node.batches, 0);
	assert_int_equal(ng_tracker_count(&w->p->tr_node), 0);
	assert_int_equal(w->p->c.node_unseen, 1);
	/* The query seen, the real answer seen: a forged one in its place
	 * (other bytes on the same flow) still teaches the node nothing. */
	udp_answer(&real, "10.96.0.10", "s3.example.com", "10.50.0.5", 300);
	node_sees(w, "10.96.0.10", "s3.example.com", &real);
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.67", 300);
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(w->node.batches, 0);
	assert_int_equal(w->p->c.node_unseen, 2);
	/* The real one teaches both sides. */
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &real), NF_ACCEPT);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.50.0.5"), 1);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.66.0.67"), 0);
	/* An answer the node saw with no query of the pod's outstanding (the
	 * query was answered): counted, never vouched for. */
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.68", 300);
	node_sees_to_pod(w, &k);
	assert_int_equal(w->p->nodeseen.seen.c.unmatched, 1);
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.66.0.68"), 0);
	assert_int_equal(w->p->c.node_unseen, 3);
	/* Seen on another pod's host peer: not this pod's. */
	node_sees_query(w, "10.96.0.10", "s3.example.com");
	udp_answer(&k, "10.96.0.10", "s3.example.com", "10.66.0.69", 300);
	w->p->nodeseen.host_ifindex = HOSTIDX + 1;
	node_sees_to_pod(w, &k);
	w->p->nodeseen.host_ifindex = HOSTIDX;
	asked(w, "10.96.0.10", 17, "s3.example.com");
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.66.0.69"), 0);
	assert_int_equal(w->obs.foreign, 1);
}

static void test_metadata_and_unparsed(void **state)
{
	struct world *w = *state;
	struct pkt k;

	asked(w, "10.96.0.10", 17, "s3.example.com");
	udp_answer(&k, "10.96.0.10", "s3.example.com", "169.254.169.254", 300);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->p->c.metadata, 1);
	assert_int_equal(ng_tracker_count(&w->p->tr), 0);
	packet(&k, "10.96.0.10", 53, 17, 0, 0, (const uint8_t *)"not dns", 7);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->p->c.unparsed, 1);
	assert_int_equal(w->pod.batches + w->node.batches, 0);
}

/* The node saw a TCP exchange on the pod's port 40000: the pod's SYN and
 * its query for s3.example.com (in two segments), the resolver's SYN-ACK
 * and the answer stream `stream` (in two segments). */
static void node_sees_tcp(struct world *w, const uint8_t *stream, size_t len)
{
	struct tu_dns *m = malloc(sizeof(*m));
	uint8_t q[300];
	struct pkt k;

	assert_non_null(m);
	m->n = 0;
	tu_put16(m, 0x4242);
	tu_put16(m, 0x0100);
	tu_put16(m, 1);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_put16(m, 0);
	tu_name(m, "s3.example.com");
	tu_put16(m, 1);
	tu_put16(m, 1);
	put16(q, (unsigned)m->n);
	memcpy(q + 2, m->b, m->n);
	packet_between(&k, "10.244.1.5", "10.96.0.10", 40000, 53, 6, 9000, NG_TCP_SYN, NULL, 0);
	node_sees_from_pod(w, &k);
	packet_between(&k, "10.244.1.5", "10.96.0.10", 40000, 53, 6, 9001, 0x10, q, 5);
	node_sees_from_pod(w, &k);
	packet_between(&k, "10.244.1.5", "10.96.0.10", 40000, 53, 6, 9006, 0x10, q + 5, m->n + 2 - 5);
	node_sees_from_pod(w, &k);
	packet(&k, "10.96.0.10", 53, 6, 5000, NG_TCP_SYN | 0x10, NULL, 0);
	node_sees_to_pod(w, &k);
	packet(&k, "10.96.0.10", 53, 6, 5001, 0x10, stream, 10);
	node_sees_to_pod(w, &k);
	packet(&k, "10.96.0.10", 53, 6, 5011, 0x10, stream + 10, len - 10);
	node_sees_to_pod(w, &k);
	assert_int_equal(w->p->nodeseen.seen.c.queries, 1);
	assert_int_equal(w->p->nodeseen.seen.c.matched, 1);
	free(m);
}

static void test_tcp_holds_the_completing_segment(void **state)
{
	struct world *w = *state;
	struct tu_dns *m = malloc(sizeof(*m));
	const char *ips[] = {"10.50.0.8"};
	uint8_t stream[600];
	size_t len;
	struct pkt k;

	assert_non_null(m);
	answer(m, "s3.example.com", ips, 1, 300);
	put16(stream, (unsigned)m->n); /* RFC 7766 framing */
	memcpy(stream + 2, m->b, m->n);
	len = m->n + 2;
	free(m);
	/* Data with no flow (no SYN-ACK seen): dropped; a bare ACK passes. */
	packet(&k, "10.96.0.10", 53, 6, 5001, 0x10, stream, 10);
	assert_int_equal(verdict(w, &k), NF_DROP);
	packet(&k, "10.96.0.10", 53, 6, 5001, 0x10, NULL, 0);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	asked(w, "10.96.0.10", 6, "s3.example.com");
	/* The resolver's SYN-ACK starts the flow. */
	packet(&k, "10.96.0.10", 53, 6, 5000, NG_TCP_SYN | 0x10, NULL, 0);
	node_sees_tcp(w, stream, len);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	/* The first 10 bytes complete nothing: passed at once. */
	packet(&k, "10.96.0.10", 53, 6, 5001, 0x10, stream, 10);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches, 0);
	/* A segment past a gap: dropped (it comes again). */
	packet(&k, "10.96.0.10", 53, 6, 5021, 0x10, stream + 20, len - 20);
	assert_int_equal(verdict(w, &k), NF_DROP);
	/* The rest completes the message, but the kernel refuses: dropped,
	 * rewound, the tracker reverted. */
	w->pod.f->sc[0].refuse_errno = EPERM;
	packet(&k, "10.96.0.10", 53, 6, 5011, 0x10, stream + 10, len - 10);
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(ng_tracker_count(&w->p->tr), 0);
	assert_int_equal(w->node.batches, 0);
	/* Its retransmission: committed on both sides, then accepted. */
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	assert_int_equal(w->pod.batches, 2); /* the refused one, then this */
	assert_int_equal(added(&w->pod, NG_TABLE, "names_v4", "10.50.0.8"), 2);
	assert_int_equal(added(&w->node, HOST, "names_v4", "10.50.0.8"), 1);
	assert_int_equal(ng_tracker_count(&w->p->tr), 1);
	assert_int_equal(w->p->c.answers, 2); /* the refused one and its retransmission */
	/* An in-order FIN ends the flow: even in-order data has none to land
	 * in after it. */
	packet(&k, "10.96.0.10", 53, 6, (uint32_t)(5001 + len), NG_TCP_FIN | 0x10, NULL, 0);
	assert_int_equal(verdict(w, &k), NF_ACCEPT);
	packet(&k, "10.96.0.10", 53, 6, (uint32_t)(5001 + len), 0x10, stream, 10);
	assert_int_equal(verdict(w, &k), NF_DROP);
	assert_int_equal(w->p->c.dropped, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_foreign_packets_dropped_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_senders_pass_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_answer_committed_then_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_commit_drops_and_reverts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_metadata_and_unparsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_side_learns_only_what_it_saw, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_holds_the_completing_segment, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
