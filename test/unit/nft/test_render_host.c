/* The host-side table: its name (derivable from the attachment alone, so
 * DEL finds it without the pod's namespace), its comment, and its body: the
 * guard's rules and sets (same names and key layouts) plus the device index
 * and MAC checks. Read back from the batch; no socket, no root. */
#include "testutil.h"

#include <errno.h>
#include <linux/netfilter.h>

#include "nft/batch.h"
#include "nft/render.h"
#include "nft/render_host.h"
#include "nft/snapshot.h"

static void test_name(void **state)
{
	(void)state;
	char buf[NG_HOST_TABLE_MAX], id[256], ifn[16], a[NG_HOST_TABLE_MAX], b[NG_HOST_TABLE_MAX];
	char longid[300];

	assert_int_equal(ng_host_table_name("0123abcdef", "eth0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ngh.0123abcdef.eth0");
	assert_true(ng_host_table_parse(buf, id, sizeof(id), ifn, sizeof(ifn)));
	assert_string_equal(id, "0123abcdef");
	assert_string_equal(ifn, "eth0");
	/* Bytes outside [A-Za-z0-9-] are escaped, so "a.b" + "c" and "a" +
	 * "b.c" (or "b_2ec") cannot meet. */
	assert_int_equal(ng_host_table_name("a.b", "c", a, sizeof(a)), 0);
	assert_int_equal(ng_host_table_name("a", "b.c", b, sizeof(b)), 0);
	assert_string_not_equal(a, b);
	assert_string_equal(a, "ngh.a_2eb.c");
	assert_int_equal(ng_host_table_name("a", "b_2ec", b, sizeof(b)), 0);
	assert_string_equal(b, "ngh.a.b_5f2ec");
	assert_true(ng_host_table_parse(b, id, sizeof(id), ifn, sizeof(ifn)));
	assert_string_equal(ifn, "b_2ec");
	/* Not ours, or malformed: refused. */
	assert_false(ng_host_table_parse("boxxkite_netguard", id, sizeof(id), ifn, sizeof(ifn)));
	assert_false(ng_host_table_parse("ngh.abc", id, sizeof(id), ifn, sizeof(ifn)));
	assert_false(ng_host_table_parse("ngh.a.b.c", id, sizeof(id), ifn, sizeof(ifn)));
	assert_false(ng_host_table_parse("ngh.a_zz.eth0", id, sizeof(id), ifn, sizeof(ifn)));
	assert_false(ng_host_table_parse("ngh.a_61.eth0", id, sizeof(id), ifn,
					 sizeof(ifn))); /* 'a' never escaped */
	assert_false(ng_host_table_parse("ngh..eth0", id, sizeof(id), ifn, sizeof(ifn)));
	/* Empty or too long: errors, never a cut name two attachments share. */
	assert_int_equal(ng_host_table_name("", "eth0", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(ng_host_table_name("x", "", buf, sizeof(buf)), -EINVAL);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(ng_host_table_name(longid, "eth0", buf, sizeof(buf)), -ENAMETOOLONG);
	assert_int_equal(ng_host_table_name("abc", "eth0", buf, 8), -ENAMETOOLONG);
}

static void test_comment(void **state)
{
	(void)state;
	char net[64], dev[16];
	int idx = 0;

	assert_true(ng_host_comment_parse(
		"boxxkite-netguard 0.2.0 host: ifindex 17 dev veth1a2b network k8s-pod-net pod a/b", &idx,
		dev, net, sizeof(net)));
	assert_int_equal(idx, 17);
	assert_string_equal(dev, "veth1a2b");
	assert_string_equal(net, "k8s-pod-net");
	assert_false(ng_host_comment_parse("boxxkite-netguard 0.2.0 host: ifindex 17 network n pod a/b", &idx,
					   dev, net, sizeof(net)));
	assert_false(ng_host_comment_parse(
		"boxxkite-netguard 0.2.0 host: ifindex 17 dev 0123456789abcdefg network n pod a/b", &idx, dev,
		net, sizeof(net)));
	assert_false(ng_host_comment_parse("boxxkite-netguard 0.2.0 host: ifindex 0 dev v network x pod a/b",
					   &idx, dev, net, sizeof(net)));
	assert_false(ng_host_comment_parse("someone host: ifindex 3 dev v network x", &idx, dev, net,
					   sizeof(net)));
}

static void add_ip(ng_ip_vec *v, const char *s)
{
	struct ng_ip ip;

	assert_int_equal(ng_ip_parse(s, &ip), 0);
	assert_int_equal(ng_vec_push(v, &ip), 0);
}

static bool has_line(const struct ng_snapshot *s, const char *text)
{
	for (size_t i = 0; i < s->lines.n; i++)
		if (strstr(s->lines.v[i], text))
			return true;
	return false;
}

static void test_body(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0x42, 0x0a, 0xf4, 0x01, 0x05};
	struct ng_policy p;
	struct ng_batch b, g;
	struct ng_err err = {0};
	struct ng_snapshot host = {.family = NFPROTO_NETDEV},
			   guard = {.table = NG_TABLE, .family = NFPROTO_NETDEV};
	char name[NG_HOST_TABLE_MAX];
	const char *stale[] = {"ngh.old.eth0"};

	memset(&p, 0, sizeof(p));
	add_ip(&p.metadata[0], "169.254.169.254");
	add_ip(&p.pod4, "10.244.1.5");
	add_ip(&p.source[0], "10.244.1.5");
	add_ip(&p.source[1], "fe80::42:aff:fef4:105");
	p.raw_guard = true;
	snprintf(p.ifname, sizeof(p.ifname), "eth0");
	p.host = true;
	snprintf(p.host_dev, sizeof(p.host_dev), "veth1234");
	p.host_ifindex = 42;
	memcpy(p.mac, mac, 6);
	snprintf(p.host_comment, sizeof(p.host_comment),
		 "boxxkite-netguard x host: ifindex 42 dev veth1234 network n pod a/b");

	assert_int_equal(ng_host_table_name("cid", "eth0", name, sizeof(name)), 0);
	assert_int_equal(ng_batch_init(&b, name, 1, &err), 0);
	assert_int_equal(ng_render_host(&p, false, stale, 1, &b, &err), 0);
	host.table = name;
	assert_int_equal(ng_snapshot_from_batch(&host, &b), 0);
	/* Bound to the peer on ingress, policy drop. */
	for (size_t i = 0; getenv("SHOW") && i < host.lines.n; i++)
		puts(host.lines.v[i]);
	assert_true(has_line(&host, "chain from_pod hook 0 priority 0 policy 0 type filter device veth1234"));
	/* The device index first: a later device of that name goes by. */
	assert_true(has_line(
		&host, "[ meta load iif => reg 1 ] [ cmp neq reg 1 0x0000002a ] [ immediate reg 0 accept ]"));
	/* Then the pod's MAC (link-layer offset 6, 6 bytes). */
	assert_true(has_line(&host,
			     "[ payload load 6b @ link header + 6 => reg 1 ] [ cmp neq reg 1 0xf40a4202 "
			     "0x00000501 ] [ immediate reg 0 jump -> refuse_host ]"));
	/* ARP: sender MAC and sender address the pod's. */
	assert_true(has_line(&host,
			     "[ payload load 6b @ network header + 8 => reg 1 ] [ cmp eq reg 1 0xf40a4202 "
			     "0x00000501 ]"));
	assert_true(
		has_line(&host, "lookup reg 1 set source_v4 0x1 ] [ immediate reg 0 jump -> refuse_host ]"));
	assert_true(has_line(&host, "host_denied"));

	/* The replace form removes this very table first (create if missing,
	 * delete), after the stale ones. */
	ng_batch_free(&b);
	assert_int_equal(ng_batch_init(&b, name, 1, &err), 0);
	assert_int_equal(ng_render_host(&p, true, stale, 1, &b, &err), 0);
	char want_stale[400], want_self[400];
	bool seen_stale = false, seen_self = false;
	snprintf(want_stale, sizeof(want_stale), "table netdev %s (stale", stale[0]);
	snprintf(want_self, sizeof(want_self), "table netdev %s (remove the previous host-side table)", name);
	for (uint32_t i = 0; i < ng_batch_count(&b); i++) {
		const char *d = ng_batch_describe(&b, b.seq_begin + 1 + i);

		seen_stale |= d && strncmp(d, want_stale, strlen(want_stale)) == 0;
		seen_self |= d && strcmp(d, want_self) == 0;
	}
	assert_true(seen_stale);
	assert_true(seen_self);

	/* The guard, rendered for the same policy: every set line (name, flags,
	 * key type and layout) is in the host table too, so the agent writes
	 * the same name elements into both. */
	assert_int_equal(ng_batch_init(&g, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_create(&p, &g, &err), 0);
	assert_int_equal(ng_snapshot_from_batch(&guard, &g), 0);
	size_t sets = 0;
	for (size_t i = 0; i < guard.lines.n; i++) {
		if (strncmp(guard.lines.v[i], "set ", 4) != 0)
			continue;
		sets++;
		assert_true(has_line(&host, guard.lines.v[i]));
	}
	assert_true(sets >= 17);
	ng_snapshot_free(&host);
	ng_snapshot_free(&guard);
	ng_batch_free(&b);
	ng_batch_free(&g);
	ng_policy_free(&p);
}

/* In "learn" mode the host side copies the pod's DNS to the node-side
 * observer: each query in the DNS rule (after the source checks), each
 * answer on the peer's egress (chain to_pod, accept); without learning,
 * no copy and no to_pod. */
static void test_observe(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0x42, 0x0a, 0xf4, 0x01, 0x05};
	char name[NG_HOST_TABLE_MAX];
	struct ng_err err = {0};

	assert_int_equal(ng_host_table_name("cid", "eth0", name, sizeof(name)), 0);
	for (int learn = 0; learn < 2; learn++) {
		struct ng_policy p;
		struct ng_batch b;
		struct ng_snapshot host = {.table = name, .family = NFPROTO_NETDEV};
		size_t copies = 0, to_pod = 0;

		memset(&p, 0, sizeof(p));
		add_ip(&p.pod4, "10.244.1.5");
		add_ip(&p.source[0], "10.244.1.5");
		p.raw_guard = p.host = true;
		p.learn = learn == 1;
		snprintf(p.ifname, sizeof(p.ifname), "eth0");
		snprintf(p.host_dev, sizeof(p.host_dev), "veth1234");
		p.host_ifindex = 42;
		memcpy(p.mac, mac, 6);
		assert_int_equal(ng_batch_init(&b, name, 1, &err), 0);
		assert_int_equal(ng_render_host(&p, false, NULL, 0, &b, &err), 0);
		assert_int_equal(ng_snapshot_from_batch(&host, &b), 0);
		for (size_t i = 0; i < host.lines.n; i++) {
			const char *l = host.lines.v[i];

			if (getenv("SHOW"))
				puts(l);
			if (strstr(l, "[ log group 65053 snaplen 65000 qthreshold 1 ]"))
				copies++;
			if (strstr(l, "rule to_pod ") || strstr(l, "chain to_pod "))
				to_pod++;
		}
		if (!learn) {
			assert_int_equal(copies, 0);
			assert_int_equal(to_pod, 0);
		} else {
			/* Queries: the DNS rule of raw_v4 and raw_v6, after the
			 * source check; answers: to_pod's two rules. */
			assert_int_equal(copies, 4);
			assert_true(has_line(
				&host,
				"chain to_pod hook 1 priority 0 policy 1 type filter device veth1234"));
			assert_true(has_line(
				&host, "[ meta load oif => reg 1 ] [ cmp neq reg 1 0x0000002a ] [ immediate "
				       "reg 0 accept ]"));
			assert_true(has_line(&host,
					     "lookup reg 1 set dns_v4 0x0 ] [ log group 65053 snaplen 65000 "
					     "qthreshold 1 ] [ immediate reg 0 accept ]"));
		}
		ng_snapshot_free(&host);
		ng_batch_free(&b);
		ng_policy_free(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_comment),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_observe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
