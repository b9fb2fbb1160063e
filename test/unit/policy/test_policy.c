/* Policy compilation (config + annotations + prevResult + DNS -> sets) and
 * set normalisation. */
#include "testutil.h"

#include "policy/annotations.h"
#include "policy/dnsparse.h"
#include "policy/metadata.h"
#include "policy/normalize.h"
#include "policy/policy.h"
#include "spec/prevresult.h"
#include "policy/podcomment.h"

#define PREV                                                                                             \
	"{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.244.1.5/24\",\"gateway\":\"10.244.1.1\"}," \
	"{\"address\":\"fd00:244:1::5/64\",\"gateway\":\"fd00:244:1::1\"}],"                             \
	"\"interfaces\":[{\"name\":\"br0\",\"mac\":\"aa:aa:aa:aa:aa:aa\"},"                              \
	"{\"name\":\"eth0\",\"mac\":\"e2:1f:70:28:c5:85\",\"sandbox\":\"/run/netns/p\"}]}"

struct fx {
	json_t *root;
	struct ng_config cfg;
	struct ng_annotations ann;
	struct ng_prev prev;
	ng_resolved res;
	struct ng_policy pol;
};

static void fx_load(struct fx *f, const char *annotations)
{
	struct ng_err err = {0};
	json_t *prev = tu_json(PREV);

	memset(f, 0, sizeof(*f));
	f->root = tu_json(BASE_CONF);
	if (annotations) {
		json_t *rc = json_object();

		json_object_set_new(rc, "io.kubernetes.cri.pod-annotations", tu_json(annotations));
		json_object_set_new(f->root, "runtimeConfig", rc);
	}
	assert_int_equal(ng_config_parse(f->root, &f->cfg, &err), 0);
	assert_int_equal(ng_annotations_parse(f->root, &f->cfg, &f->ann, &err), 0);
	assert_int_equal(ng_prev_parse(prev, &f->prev, &err), 0);
	json_decref(prev);
}

static void fx_answer(struct fx *f, const char *name, const char *ip, uint32_t ttl)
{
	struct ng_resolved_name *r = NULL;
	struct ng_answer a = {.ttl = ttl};

	for (size_t i = 0; i < f->res.n; i++)
		if (!strcmp(f->res.v[i].name, name))
			r = &f->res.v[i];
	if (!r) {
		struct ng_resolved_name n = {0};

		snprintf(n.name, sizeof(n.name), "%s", name);
		assert_int_equal(ng_vec_push(&f->res, &n), 0);
		r = &f->res.v[f->res.n - 1];
	}
	assert_int_equal(ng_ip_parse(ip, &a.ip), 0);
	assert_int_equal(ng_vec_push(&r->answers, &a), 0);
}

static void fx_free(struct fx *f)
{
	ng_policy_free(&f->pol);
	ng_resolved_free(&f->res);
	ng_prev_free(&f->prev);
	ng_annotations_free(&f->ann);
	ng_config_free(&f->cfg);
	json_decref(f->root);
}

static bool has_elem(const ng_elem_vec *v, const char *lo, const char *hi, uint8_t proto, uint16_t plo,
		     uint16_t phi)
{
	struct ng_ip l, h;

	ng_ip_parse(lo, &l);
	ng_ip_parse(hi, &h);
	for (size_t i = 0; i < v->n; i++)
		if (ng_ip_eq(&v->v[i].lo, &l) && ng_ip_eq(&v->v[i].hi, &h) && v->v[i].proto == proto &&
		    v->v[i].p_lo == plo && v->v[i].p_hi == phi)
			return true;
	return false;
}

static void test_compile_full(void **state)
{
	(void)state;
	struct fx f;
	struct ng_err err = {0};

	fx_load(&f, "{\"netguard.boxxkite.io/egress\":\"10.1.2.3:443,udp://10.9.0.0/16:5353\"}");
	fx_answer(&f, "s3.example.com", "10.50.0.1", 30);
	fx_answer(&f, "s3.example.com", "fd00:50::1", 7200);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, NULL, &f.pol, &err), 0);

	assert_int_equal(f.pol.metadata[0].n, 8);
	assert_int_equal(f.pol.metadata[1].n, 6 + 8 * 4);
	/* every form with free bits, of every IPv4 address */
	assert_int_equal(f.pol.metadata6_embedded.n, NG_V6_FORMS * 8);
	/* MLD (issue 13): the solicited-node groups of fd00:244:1::5 and of the
	 * EUI-64 link-local of the sandbox's MAC; not the bridge's. */
	{
		struct ng_ip g1, g2;

		assert_int_equal(f.pol.mld6.n, 2);
		ng_ip_parse("ff02::1:ff00:5", &g1);
		ng_ip_parse("ff02::1:ff28:c585", &g2);
		assert_true(ng_ip_eq(&f.pol.mld6.v[0], &g1));
		assert_true(ng_ip_eq(&f.pol.mld6.v[1], &g2));
	}
	assert_int_equal(f.pol.dns[0].n, 2);
	assert_true(has_elem(&f.pol.dns[0], "10.96.0.10", "10.96.0.10", NG_PROTO_UDP, 53, 53));
	assert_true(has_elem(&f.pol.dns[0], "10.96.0.10", "10.96.0.10", NG_PROTO_TCP, 53, 53));
	assert_true(has_elem(&f.pol.dns[1], "fd00:10:96::a", "fd00:10:96::a", NG_PROTO_TCP, 53, 53));

	assert_int_equal(f.pol.allow[0].n, 3);
	assert_true(has_elem(&f.pol.allow[0], "10.20.0.0", "10.20.255.255", NG_PROTO_TCP, 443, 443));
	assert_true(has_elem(&f.pol.allow[0], "10.1.2.3", "10.1.2.3", NG_PROTO_TCP, 443, 443));
	assert_true(has_elem(&f.pol.allow[0], "10.9.0.0", "10.9.255.255", NG_PROTO_UDP, 5353, 5353));
	assert_int_equal(f.pol.allow[1].n, 0);

	/* Names resolved at ADD ("resolve"): pinned for the pod's life, no
	 * timeout whatever the TTL (an expiry would cut live connections). */
	assert_int_equal(f.pol.names[0].n, 1);
	assert_int_equal(f.pol.names[0].v[0].timeout, 0);
	assert_int_equal(f.pol.names[1].n, 1);
	assert_int_equal(f.pol.names[1].v[0].timeout, 0);
	assert_int_equal(f.pol.name_ports.n, 1);

	/* ND: link scope, the pod's own /64 and v6 gateway; MLD reports are
	 * not here (any report to ff02::16 was: issue 13), but in mld6. */
	assert_true(has_elem(&f.pol.nd6, "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0, 135, 136));
	for (size_t i = 0; i < f.pol.nd6.n; i++)
		assert_true(f.pol.nd6.v[i].p_hi < 143);
	assert_true(has_elem(&f.pol.nd6, "fd00:244:1::", "fd00:244:1::ffff:ffff:ffff:ffff", 0, 135, 136));
	/* The kernel's own router solicitations, to all-routers only: an idle
	 * pod denies nothing. Not to any other address, and no other type
	 * below NS (134, an advertisement, is a router's to send). */
	assert_true(has_elem(&f.pol.nd6, "ff02::2", "ff02::2", 0, 133, 133));
	for (size_t i = 0; i < f.pol.nd6.n; i++) {
		struct ng_ip all_routers;

		ng_ip_parse("ff02::2", &all_routers);
		if (f.pol.nd6.v[i].p_lo < 135)
			assert_true(f.pol.nd6.v[i].p_lo == 133 && f.pol.nd6.v[i].p_hi == 133 &&
				    ng_ip_eq(&f.pol.nd6.v[i].lo, &all_routers) &&
				    ng_ip_eq(&f.pol.nd6.v[i].hi, &all_routers));
	}

	assert_int_equal(f.pol.ingress[0].n, 1);
	assert_true(has_elem(&f.pol.ingress[0], "10.244.0.0", "10.244.255.255", 0, 8080, 8080));
	assert_int_equal(f.pol.node[0].n, 1);
	assert_int_equal(f.pol.node[1].n, 1);
	fx_free(&f);
}

/* A prevResult with an absurdly wide on-link prefix (fd00::5/0) gives ND
 * the address's /64, never ::/0. */
static void test_nd_prefix_clamped(void **state)
{
	(void)state;
	struct fx f;
	struct ng_err err = {0};

	fx_load(&f, NULL);
	for (size_t i = 0; i < f.prev.addrs.n; i++)
		if (f.prev.addrs.v[i].ip.fam == NG_V6)
			f.prev.addrs.v[i].plen = 0;
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, NULL, NULL, &f.pol, &err), 0);
	assert_true(has_elem(&f.pol.nd6, "fd00:244:1::", "fd00:244:1::ffff:ffff:ffff:ffff", 0, 135, 136));
	for (size_t i = 0; i < f.pol.nd6.n; i++) {
		struct ng_ip any;

		ng_ip_parse("::", &any);
		assert_false(ng_ip_eq(&f.pol.nd6.v[i].lo, &any));
	}
	fx_free(&f);
}

static void test_unresolved_name(void **state)
{
	(void)state;
	struct fx f;
	struct ng_err err = {0};

	fx_load(&f, NULL);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, NULL, &f.pol, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "s3.example.com");
	fx_free(&f);

	/* CHECK mode: no resolution, name sets stay empty, shapes recorded. */
	fx_load(&f, NULL);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, NULL, NULL, &f.pol, &err), 0);
	assert_int_equal(f.pol.names[0].n + f.pol.names[1].n, 0);
	assert_int_equal(f.pol.name_ports.n, 1);
	assert_int_equal(f.pol.name_ports.v[0].p_lo, 443);
	fx_free(&f);
}

/* A name whose DNS answer is a metadata address (an attacker's DNS, a
 * poisoned cache, a grant under a suffix the pod author controls) fails
 * ADD like an allow entry covering it: its address must not reach a set
 * that accepts (the packet-socket guard's mirror would let it out). */
static void test_name_resolving_to_metadata(void **state)
{
	(void)state;
	static const struct {
		const char *annotations, *name, *ip;
		int code;
	} cases[] = {
		{NULL, "s3.example.com", "169.254.169.254", NG_E_CONFIG},
		{NULL, "s3.example.com", "::ffff:169.254.169.254", NG_E_CONFIG},
		/* issue 13: the IPv6 forms with free bits, as DNS answers */
		{NULL, "s3.example.com", "64:ff9b:1:a9fe:a9:fe00::", NG_E_CONFIG},
		{NULL, "s3.example.com", "64:ff9b:1:77::a9fe:a9fe", NG_E_CONFIG},
		{NULL, "s3.example.com", "2002:a9fe:a9fe:1::5", NG_E_CONFIG},
		{NULL, "s3.example.com", "2001:0:4136:e378:8000:63bf:5601:5601", NG_E_CONFIG},
		{NULL, "s3.example.com", "2001:db8:1:2:200:5efe:a9fe:a9fe", NG_E_CONFIG},
		{NULL, "s3.example.com", "::169.254.169.254", NG_E_CONFIG},
		{"{\"netguard.boxxkite.io/egress\":\"a.example.com:443\"}", "a.example.com",
		 "169.254.169.254", NG_E_ENVELOPE},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		struct ng_err err = {0};

		fx_load(&f, cases[i].annotations);
		fx_answer(&f, "s3.example.com", "10.50.0.1", 30);
		if (strcmp(cases[i].name, "s3.example.com") != 0)
			fx_answer(&f, cases[i].name, "10.60.0.1", 30);
		fx_answer(&f, cases[i].name, cases[i].ip, 30);
		assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, NULL, &f.pol, &err), -1);
		assert_int_equal(err.code, cases[i].code);
		assert_contains(err.msg, cases[i].ip);
		assert_contains(err.msg, cases[i].name);
		assert_contains(err.msg, "metadata");
		fx_free(&f);
	}
}

static void test_names_list(void **state)
{
	(void)state;
	struct fx f;
	ng_name_list names = {0};

	fx_load(&f, "{\"netguard.boxxkite.io/egress\":\"s3.example.com:443,a.example.com:443\"}");
	assert_int_equal(ng_policy_names(&f.cfg, &f.ann, &names), 0);
	assert_int_equal(names.n, 2); /* s3.example.com once */
	assert_string_equal(names.v[0], "s3.example.com");
	assert_string_equal(names.v[1], "a.example.com");
	ng_vec_free(&names);
	fx_free(&f);
}

static void test_node_not_allowed(void **state)
{
	(void)state;
	struct fx f;
	struct ng_err err = {0};

	fx_load(&f, NULL);
	f.cfg.allow_node = false;
	fx_answer(&f, "s3.example.com", "10.50.0.1", 30);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, NULL, &f.pol, &err), 0);
	assert_int_equal(f.pol.node[0].n + f.pol.node[1].n, 0);
	fx_free(&f);
}

static void test_pod_identity(void **state)
{
	(void)state;
	struct fx f;
	struct ng_err err = {0};
	struct ng_podref id = {.ns = "sandboxes",
			       .name = "p-1",
			       .container_id = "0123456789abcdef",
			       .ifname = "eth0"},
			 back;
	char buf[256];

	fx_load(&f, NULL);
	fx_answer(&f, "s3.example.com", "10.50.0.1", 30);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, &id, &f.pol, &err), 0);
	assert_string_equal(f.pol.pod, "sandboxes/p-1");
	/* The attachment whole and first (DEL reads it to know the table is
	 * its own), then the pod. */
	assert_contains(f.pol.comment, ": container 0123456789abcdef if eth0 pod sandboxes/p-1");
	/* The comment reads back into the same identity (verify, stats, DEL). */
	snprintf(buf, sizeof(buf), "%s", f.pol.comment);
	assert_true(ng_podref_from_comment(buf, &back));
	assert_string_equal(back.ns, "sandboxes");
	assert_string_equal(back.name, "p-1");
	assert_string_equal(back.container_id, "0123456789abcdef");
	assert_string_equal(back.ifname, "eth0");
	/* 0.1's form still reads (DEL of a pod added before the upgrade). */
	snprintf(buf, sizeof(buf), "boxxkite-netguard 0.1.0: pod ns/n container 0123456789ab");
	assert_true(ng_podref_from_comment(buf, &back));
	assert_string_equal(back.container_id, "0123456789ab");
	assert_string_equal(back.ifname, "");
	assert_string_equal(back.name, "n");
	/* The prevResult's addresses are the pod's only sources. */
	assert_int_equal(f.pol.source[0].n + f.pol.source[1].n, f.prev.addrs.n);
	snprintf(buf, sizeof(buf), "someone else's table");
	assert_false(ng_podref_from_comment(buf, &back));
	fx_free(&f);

	/* Without CNI_ARGS the pod is "-/-", never an empty or garbled name. */
	fx_load(&f, NULL);
	fx_answer(&f, "s3.example.com", "10.50.0.1", 30);
	assert_int_equal(ng_policy_compile(&f.cfg, &f.ann, &f.prev, &f.res, NULL, &f.pol, &err), 0);
	assert_string_equal(f.pol.pod, "-/-");
	snprintf(buf, sizeof(buf), "%s", f.pol.comment);
	assert_true(ng_podref_from_comment(buf, &back));
	assert_string_equal(back.ns, "");
	assert_string_equal(back.name, "");
	fx_free(&f);
}

/* ---- normalisation --------------------------------------------------------- */

static struct ng_elem box(const char *lo, const char *hi, uint8_t proto, uint16_t plo, uint16_t phi,
			  uint32_t timeout)
{
	struct ng_elem e = {.proto = proto, .p_lo = plo, .p_hi = phi, .timeout = timeout};

	ng_ip_parse(lo, &e.lo);
	ng_ip_parse(hi, &e.hi);
	return e;
}

static void push(ng_elem_vec *v, struct ng_elem e)
{
	assert_int_equal(ng_vec_push(v, &e), 0);
}

static void test_normalize_merge(void **state)
{
	(void)state;
	ng_elem_vec v = {0};

	/* Contained and overlapping address ranges on one port merge. */
	push(&v, box("10.0.0.0", "10.255.255.255", 6, 443, 443, 0));
	push(&v, box("10.1.2.3", "10.1.2.3", 6, 443, 443, 0));
	push(&v, box("10.255.0.0", "11.0.255.255", 6, 443, 443, 0));
	push(&v, box("11.2.0.0", "11.2.0.255", 6, 443, 443, 0)); /* not touching */
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 2);
	assert_true(has_elem(&v, "10.0.0.0", "11.0.255.255", 6, 443, 443));
	assert_true(has_elem(&v, "11.2.0.0", "11.2.0.255", 6, 443, 443));
	ng_vec_free(&v);

	/* Adjacent ranges merge; other protocols stay apart. */
	push(&v, box("10.0.0.0", "10.0.0.255", 6, 80, 80, 0));
	push(&v, box("10.0.1.0", "10.0.1.255", 6, 80, 80, 0));
	push(&v, box("10.0.0.0", "10.0.1.255", 17, 80, 80, 0));
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 2);
	assert_true(has_elem(&v, "10.0.0.0", "10.0.1.255", 6, 80, 80));
	assert_true(has_elem(&v, "10.0.0.0", "10.0.1.255", 17, 80, 80));
	ng_vec_free(&v);
}

static void test_normalize_port_split(void **state)
{
	(void)state;
	ng_elem_vec v = {0};

	/* [0-10]x[0-10] and [5-15]x[5-15] in both orders conflict in the
	 * kernel; they must become disjoint boxes with the same union. */
	push(&v, box("10.0.0.0", "10.0.0.10", 6, 100, 110, 0));
	push(&v, box("10.0.0.5", "10.0.0.15", 6, 105, 115, 0));
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 3);
	assert_true(has_elem(&v, "10.0.0.0", "10.0.0.10", 6, 100, 104));
	assert_true(has_elem(&v, "10.0.0.0", "10.0.0.15", 6, 105, 110));
	assert_true(has_elem(&v, "10.0.0.5", "10.0.0.15", 6, 111, 115));
	ng_vec_free(&v);
}

static void test_normalize_timeouts(void **state)
{
	(void)state;
	ng_elem_vec v = {0};

	/* The same address from two names: one element, the longer life. */
	push(&v, box("10.0.0.1", "10.0.0.1", 6, 443, 443, 300));
	push(&v, box("10.0.0.1", "10.0.0.1", 6, 443, 443, 900));
	/* Neighbours with different lives are not merged. */
	push(&v, box("10.0.0.2", "10.0.0.2", 6, 443, 443, 300));
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.v[0].timeout, 900);
	assert_int_equal(v.v[1].timeout, 300);
	ng_vec_free(&v);

	/* A neighbour merged first must not inherit a later, longer life:
	 * a(10.0.0.1, 1h), b(10.0.0.2, 1h), c(10.0.0.2, 1d). */
	push(&v, box("10.0.0.1", "10.0.0.1", 6, 443, 443, 3600));
	push(&v, box("10.0.0.2", "10.0.0.2", 6, 443, 443, 3600));
	push(&v, box("10.0.0.2", "10.0.0.2", 6, 443, 443, 86400));
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 2);
	assert_true(has_elem(&v, "10.0.0.1", "10.0.0.1", 6, 443, 443));
	assert_int_equal(v.v[0].timeout, 3600);
	assert_int_equal(v.v[1].timeout, 86400);
	ng_vec_free(&v);

	/* A range running to the last address of the family. */
	push(&v, box("255.255.255.0", "255.255.255.255", 6, 443, 443, 60));
	push(&v, box("255.255.255.255", "255.255.255.255", 6, 443, 443, 600));
	assert_int_equal(ng_elems_normalize(&v), 0);
	assert_int_equal(v.n, 2);
	assert_true(has_elem(&v, "255.255.255.0", "255.255.255.254", 6, 443, 443));
	assert_true(has_elem(&v, "255.255.255.255", "255.255.255.255", 6, 443, 443));
	ng_vec_free(&v);
}

/* Property: for random boxes, the output is pairwise disjoint and covers
 * exactly the same points as the input (checked on every point of a small
 * address/port grid). */
static bool covers(const ng_elem_vec *v, uint8_t proto, uint8_t a, uint16_t p, size_t *hits, uint32_t *life)
{
	*hits = 0;
	*life = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct ng_elem *e = &v->v[i];

		if (e->proto == proto && e->lo.a[3] <= a && a <= e->hi.a[3] && e->p_lo <= p && p <= e->p_hi) {
			(*hits)++;
			if (e->timeout > *life)
				*life = e->timeout;
		}
	}
	return *hits > 0;
}

static void test_normalize_property(void **state)
{
	(void)state;
	unsigned seed = 12345;

	for (int round = 0; round < 200; round++) {
		ng_elem_vec in = {0}, out = {0};
		int n = 1 + (int)(rand_r(&seed) % 12);

		for (int i = 0; i < n; i++) {
			uint8_t a = (uint8_t)(rand_r(&seed) % 40), b = (uint8_t)(a + rand_r(&seed) % 10);
			uint16_t p = (uint16_t)(1 + rand_r(&seed) % 30),
				 q = (uint16_t)(p + rand_r(&seed) % 8);
			struct ng_elem e = {.proto = (uint8_t)(rand_r(&seed) % 2 ? 6 : 17),
					    .p_lo = p,
					    .p_hi = q,
					    .timeout = 60u * (rand_r(&seed) % 4)};

			e.lo.fam = e.hi.fam = NG_V4;
			e.lo.a[0] = e.hi.a[0] = 10;
			e.lo.a[3] = a;
			e.hi.a[3] = b;
			push(&in, e);
			push(&out, e);
		}
		assert_int_equal(ng_elems_normalize(&out), 0);
		for (int proto = 6; proto <= 17; proto += 11)
			for (int a = 0; a < 52; a++)
				for (int p = 0; p < 40; p++) {
					size_t hin, hout;
					uint32_t lin, lout;
					bool want = covers(&in, (uint8_t)proto, (uint8_t)a, (uint16_t)p, &hin,
							   &lin);
					bool got = covers(&out, (uint8_t)proto, (uint8_t)a, (uint16_t)p,
							  &hout, &lout);

					if (want != got || hout > 1)
						fail_msg("round %d: point %d.%d/%d covered %zu times (want "
							 "%d)",
							 round, a, p, proto, hout, want);
					/* A point keeps the longest lifetime any input gave it. */
					if (lin != lout)
						fail_msg("round %d: point %d.%d/%d lives %u s, want %u s",
							 round, a, p, proto, lout, lin);
				}
		ng_vec_free(&in);
		ng_vec_free(&out);
	}
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compile_full),
		cmocka_unit_test(test_nd_prefix_clamped),
		cmocka_unit_test(test_unresolved_name),
		cmocka_unit_test(test_name_resolving_to_metadata),
		cmocka_unit_test(test_names_list),
		cmocka_unit_test(test_node_not_allowed),
		cmocka_unit_test(test_pod_identity),
		cmocka_unit_test(test_normalize_merge),
		cmocka_unit_test(test_normalize_port_split),
		cmocka_unit_test(test_normalize_timeouts),
		cmocka_unit_test(test_normalize_property),
	};
	/* clang-format on */
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
