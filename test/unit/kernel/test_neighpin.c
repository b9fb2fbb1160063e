/* kernel/neighpin.c against two fake namespaces (fake_rtnl.h): a gateway
 * is pinned only when the node itself holds its address, with the MAC of
 * the node's interface that holds it, as a permanent entry on the pod's
 * interface; the messages sent, and each way it fails. */
#include "fake_rtnl.h"

#include "kernel/neighpin.h"

static const uint8_t BR_MAC[6] = {0xaa, 0xbb, 0xcc, 0x00, 0x00, 0x02};

struct world {
	struct fns *pod, *node;
	struct ng_nl pod_nl, node_nl;
	struct ng_ip gw[4];
	size_t ngw, pinned;
	struct ng_err err;
};

static void add_gw(struct world *w, const char *text)
{
	assert_int_equal(ng_ip_parse(text, &w->gw[w->ngw++]), 0);
}

/* A bridge layout: the node's br0 (ifindex 2) holds 10.244.1.1 and
 * fd00:10::1; its wg0 (ifindex 4) holds 10.99.0.1 but has no MAC (a
 * tunnel); the pod's eth0 is ifindex 3 (the node has no ifindex 3). */
static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->pod = fns_new();
	w->node = fns_new();
	fns_link(w->node, (struct flink){.ifindex = 1, .name = "lo"});
	fns_link(w->node, (struct flink){.ifindex = 2, .name = "br0", .kind = "bridge", .have_mac = true});
	memcpy(w->node->links[1].mac, BR_MAC, 6);
	fns_link(w->node, (struct flink){.ifindex = 4, .name = "wg0", .kind = "wireguard"});
	fns_addr(w->node,
		 (struct faddr){.ifindex = 1, .address = "127.0.0.1", .local = "127.0.0.1", .plen = 8});
	fns_addr(w->node,
		 (struct faddr){.ifindex = 2, .address = "10.244.1.1", .local = "10.244.1.1", .plen = 24});
	fns_addr(w->node, (struct faddr){.ifindex = 2, .address = "fd00:10::1", .plen = 64});
	fns_addr(w->node,
		 (struct faddr){.ifindex = 4, .address = "10.99.0.1", .local = "10.99.0.1", .plen = 32});
	fns_link(w->pod, (struct flink){.ifindex = 1, .name = "lo"});
	fns_link(w->pod, (struct flink){.ifindex = 3, .name = "eth0", .kind = "veth"});
	fns_open(w->pod, &w->pod_nl);
	fns_open(w->node, &w->node_nl);
	return w;
}

static int pin(struct world *w)
{
	memset(&w->err, 0, sizeof(w->err));
	w->pinned = 99;
	return ng_neigh_pin(&w->node_nl, &w->pod_nl, "eth0", w->gw, w->ngw, &w->pinned, &w->err);
}

static void world_free(struct world *w)
{
	fns_free(w->pod);
	fns_free(w->node);
	free(w);
}

static void assert_neigh(const struct fneigh *n, const char *ip, uint8_t family)
{
	struct ng_ip want;

	assert_int_equal(ng_ip_parse(ip, &want), 0);
	assert_true(ng_ip_eq(&n->dst, &want));
	assert_int_equal(n->family, family);
	assert_int_equal(n->ifindex, 3); /* the pod's eth0, in the pod's namespace */
	assert_int_equal(n->state, NUD_PERMANENT);
	assert_memory_equal(n->mac, BR_MAC, 6);
	/* ip neigh replace: created or replaced, and acked. */
	assert_int_equal(n->flags & (NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK),
			 NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK);
}

static void test_pins_what_the_node_holds(void **state)
{
	(void)state;
	struct world *w = world_new();

	add_gw(w, "10.244.1.1");   /* br0's */
	add_gw(w, "10.244.1.254"); /* a router elsewhere: left alone */
	add_gw(w, "fd00:10::1");   /* br0's */
	add_gw(w, "10.99.0.1");    /* the node's, on a device without a MAC */
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->pinned, 2);
	assert_int_equal(w->pod->nneigh, 2);
	assert_neigh(&w->pod->neigh[0], "10.244.1.1", AF_INET);
	assert_neigh(&w->pod->neigh[1], "fd00:10::1", AF_INET6);
	/* Nothing is written on the node's side, and its links are asked for
	 * one by one (br0, wg0), never dumped: a node of 200 pods has 200
	 * veths, and their dump grew ADD's own time with the pods. */
	assert_int_equal(w->node->nneigh, 0);
	assert_int_equal(w->node->link_dumps, 0);
	world_free(w);

	/* None held by the node: nothing written in the pod. */
	w = world_new();
	add_gw(w, "10.244.1.254");
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->pinned, 0);
	assert_int_equal(w->pod->nneigh, 0);
	world_free(w);

	/* No gateways: no request at all. */
	w = world_new();
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->pinned, 0);
	assert_int_equal(w->pod->sock.nreq + w->node->sock.nreq, 0);
	world_free(w);
}

static void test_point_to_point_local(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* A ptp host veth: IFA_LOCAL is the node's own address, IFA_ADDRESS
	 * the pod's. The gateway is the local one. */
	w->node->addrs[1] =
		(struct faddr){.ifindex = 2, .address = "10.244.1.5", .local = "169.254.1.1", .plen = 32};
	add_gw(w, "169.254.1.1");
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->pinned, 1);
	assert_neigh(&w->pod->neigh[0], "169.254.1.1", AF_INET);
	world_free(w);
}

static void test_node_read_again(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* The node's address dump is interrupted (pods starting at once): the
	 * node is read again, and the answer is the same. */
	w->node->addr_intr = 1;
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->node->addr_dumps, 2);
	assert_int_equal(w->pinned, 1);
	assert_neigh(&w->pod->neigh[0], "10.244.1.1", AF_INET);
	world_free(w);

	/* What interrupted it: br0's 10.244.1.1 went away. The first, torn
	 * listing had it (as its first, unmarked address): never pinned. */
	w = world_new();
	w->node->addrs[0] = w->node->addrs[1];
	w->node->addrs[1] =
		(struct faddr){.ifindex = 1, .address = "127.0.0.1", .local = "127.0.0.1", .plen = 8};
	w->node->addr_intr = 1;
	w->node->addr_vanish = 1;
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->node->addr_dumps, 2);
	assert_int_equal(w->pinned, 0);
	assert_int_equal(w->pod->nneigh, 0);
	world_free(w);
}

static void test_forged_pod_interface(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* A forger in the pod answers first that eth0 is ifindex 5: the pin
	 * still goes on the kernel's eth0. */
	w->pod->forge_type = RTM_GETLINK;
	w->pod->forged_link = (struct flink){.ifindex = 5, .name = "eth0", .kind = "veth"};
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), 0);
	assert_int_equal(w->pod->forge_type, 0);
	assert_int_equal(w->pinned, 1);
	assert_neigh(&w->pod->neigh[0], "10.244.1.1", AF_INET);
	world_free(w);
}

static void test_errors(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* The kernel refuses the entry. */
	w->pod->neigh_errno = EPERM;
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), -1);
	assert_int_equal(w->err.code, NG_E_NETNS);
	assert_contains(w->err.msg, "pinning the gateway 10.244.1.1 on eth0: Operation not permitted");
	assert_int_equal(w->pinned, 0);
	world_free(w);

	/* The second of two is refused: an error naming it, none counted. */
	w = world_new();
	add_gw(w, "10.244.1.1");
	add_gw(w, "fd00:10::1");
	w->pod->neigh_errno = EINVAL;
	w->pod->neigh_fail_from = 1;
	assert_int_equal(pin(w), -1);
	assert_contains(w->err.msg, "pinning the gateway fd00:10::1 on eth0: Invalid argument");
	assert_int_equal(w->pod->nneigh, 2);
	assert_int_equal(w->pinned, 0);
	world_free(w);

	/* No such interface in the pod: no entry written. */
	w = world_new();
	w->pod->links[1].name = "net1";
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), -1);
	assert_contains(w->err.msg, "pinning the gateway: no interface eth0 in the pod");
	assert_int_equal(w->pod->nneigh, 0);
	world_free(w);

	/* The node's addresses unreadable: nothing written in the pod. */
	w = world_new();
	w->node->addr_dump_errno = EPERM;
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), -1);
	assert_contains(w->err.msg, "pinning the gateway: reading the node's addresses: rtnetlink dump:");
	assert_int_equal(w->pod->sock.nreq, 0);
	world_free(w);

	/* The interrupted dump never settles: an error (code 112), never a
	 * pin from half a listing. */
	w = world_new();
	w->node->addr_intr = 1000;
	add_gw(w, "10.244.1.1");
	assert_int_equal(pin(w), -1);
	assert_contains(w->err.msg, "the links or addresses changed during the dump");
	assert_int_equal(w->pod->nneigh, 0);
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pins_what_the_node_holds),
		cmocka_unit_test(test_point_to_point_local),
		cmocka_unit_test(test_node_read_again),
		cmocka_unit_test(test_forged_pod_interface),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
