/* kernel/peer.c's proof of the pod's host side, against two fake
 * namespaces (fake_rtnl.h): the pod's interface names its peer by ifindex
 * and netnsid, and the peer counts only when that namespace is the node's
 * and the device there is a veth whose own link points back. Ifindexes
 * collide across namespaces (both worlds have an index 3); a forger in the
 * pod's namespace answering first is never believed. */
#include "fake_rtnl.h"

#include "kernel/peer.h"

#define POD_FD      100 /* the fds the proof names to RTM_GETNSID */
#define NODE_FD     101
#define NODE_IN_POD 0 /* the id the pod's namespace gives the node's */
#define POD_IN_NODE 5 /* the id the node's namespace gives the pod's */

static const uint8_t POD_MAC[6] = {0x02, 0x42, 0x0a, 0xf4, 0x01, 0x05};

struct world {
	struct fns *pod, *node;
	struct ng_nl pod_nl, node_nl;
	struct ng_link_facts f;
	char why[256];
	struct ng_err err;
};

/* A ptp layout: the pod's eth0 (ifindex 3) is a veth whose peer is the
 * node's vethabc (ifindex 7), which points back at 3 in the pod's
 * namespace. The node has an ifindex 3 of its own (another pod's veth). */
static struct world *world_new(void)
{
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->pod = fns_new();
	w->node = fns_new();
	fns_link(w->pod, (struct flink){.ifindex = 1, .name = "lo"});
	fns_link(w->pod, (struct flink){.ifindex = 3,
					.name = "eth0",
					.kind = "veth",
					.have_mac = true,
					.link = 7,
					.has_nsid = true,
					.link_nsid = NODE_IN_POD});
	memcpy(w->pod->links[1].mac, POD_MAC, 6);
	fns_addr(w->pod,
		 (struct faddr){.ifindex = 3, .address = "10.244.1.5", .local = "10.244.1.5", .plen = 24});
	fns_addr(w->pod, (struct faddr){.ifindex = 3,
					.address = "fe80::42:aff:fef4:105",
					.plen = 64,
					.scope = RT_SCOPE_LINK});
	fns_addr(w->pod, (struct faddr){.ifindex = 3, .address = "fd00:10::5", .plen = 64});
	fns_addr(w->pod,
		 (struct faddr){.ifindex = 4, .address = "fe80::99", .plen = 64, .scope = RT_SCOPE_LINK});
	fns_nsid(w->pod, NODE_FD, NODE_IN_POD);

	fns_link(w->node, (struct flink){.ifindex = 1, .name = "lo"});
	fns_link(w->node, (struct flink){.ifindex = 3,
					 .name = "vethother",
					 .kind = "veth",
					 .link = 3,
					 .has_nsid = true,
					 .link_nsid = 9});
	fns_link(w->node, (struct flink){.ifindex = 7,
					 .name = "vethabc",
					 .kind = "veth",
					 .link = 3,
					 .has_nsid = true,
					 .link_nsid = POD_IN_NODE});
	fns_nsid(w->node, POD_FD, POD_IN_NODE);
	fns_nsid(w->node, 102, 9);
	fns_open(w->pod, &w->pod_nl);
	fns_open(w->node, &w->node_nl);
	return w;
}

static int prove(struct world *w)
{
	memset(&w->err, 0, sizeof(w->err));
	return ng_peer_prove(&w->pod_nl, &w->node_nl, POD_FD, NODE_FD, "eth0", &w->f, w->why, sizeof(w->why),
			     &w->err);
}

static void world_free(struct world *w)
{
	fns_free(w->pod);
	fns_free(w->node);
	free(w);
}

static void test_proved(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_ip ll;

	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "vethabc");
	assert_int_equal(w->f.peer_ifindex, 7);
	assert_int_equal(w->f.ifindex, 3);
	assert_true(w->f.have_mac);
	assert_memory_equal(w->f.mac, POD_MAC, 6);
	/* Link-local addresses of eth0 only: not its global ones, not another
	 * interface's. */
	assert_int_equal(w->f.n_link_local, 1);
	assert_int_equal(ng_ip_parse("fe80::42:aff:fef4:105", &ll), 0);
	assert_true(ng_ip_eq(&w->f.link_local[0], &ll));
	world_free(w);
}

static void test_not_a_host_peer(void **state)
{
	(void)state;
	struct world *w;

	/* A veth whose peer is in the pod's own namespace (no netnsid). */
	w = world_new();
	w->pod->links[1].has_nsid = false;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "eth0 is a veth whose peer is in the pod's own namespace");
	assert_int_equal(w->f.ifindex, 3); /* the pod's side is still read */
	world_free(w);

	/* Not a veth at all: macvlan, or no kind said. */
	w = world_new();
	w->pod->links[1].kind = "macvlan";
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "eth0 is a macvlan device, not a veth");
	world_free(w);
	w = world_new();
	w->pod->links[1].kind = NULL;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "eth0 is an unknown kind of device");
	world_free(w);

	/* The peer's namespace is not the node's: another id, or the pod's
	 * namespace gives the node's none. */
	w = world_new();
	w->pod->links[1].link_nsid = 4;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "another namespace than the node's (netnsid 4, the node is 0)");
	world_free(w);
	w = world_new();
	w->pod->nnsid = 0;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "the node is -1");
	world_free(w);
}

static void test_peer_must_point_back(void **state)
{
	(void)state;
	struct world *w;

	/* The node's device 7 links to another index than the pod's eth0. */
	w = world_new();
	w->node->links[2].link = 4;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "ifindex 7 in the node's namespace is not the veth peer of the pod's eth0");
	world_free(w);

	/* ... to index 3, but of another namespace (another pod's eth0). */
	w = world_new();
	w->node->links[2].link_nsid = 9;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	world_free(w);

	/* ... is no veth. */
	w = world_new();
	w->node->links[2].kind = "bridge";
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	world_free(w);

	/* ... is not there at all (ENODEV). */
	w = world_new();
	w->node->links[2].ifindex = 8;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	world_free(w);

	/* The node's namespace gives the pod's no id: nothing proves the
	 * peer's link is into the pod. */
	w = world_new();
	w->node->nnsid = 0;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	world_free(w);
}

static void test_ifindex_collisions(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* The pod's eth0 says "peer 3 in the node's namespace": the node's 3
	 * is a veth whose link is 3, the pod's own ifindex, but in the
	 * namespace numbered 9, not the pod's. Indexes alone would prove it. */
	w->pod->links[1].link = 3;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "ifindex 3 in the node's namespace is not the veth peer");
	world_free(w);

	/* When namespace 9 is the pod's, the same device is its peer. */
	w = world_new();
	w->pod->links[1].link = 3;
	w->node->nsid[0].id = 9;
	assert_int_equal(prove(w), 0);
	assert_string_equal(w->f.peer, "vethother");
	assert_int_equal(w->f.peer_ifindex, 3);
	world_free(w);
}

static void test_forged_replies_ignored(void **state)
{
	(void)state;
	struct world *w = world_new();

	/* eth0 is a macvlan; a forger in the pod answers first that it is a
	 * veth whose peer is the node's vethabc (which does point back). */
	w->pod->links[1].kind = "macvlan";
	w->pod->forge_type = RTM_GETLINK;
	w->pod->forged_link = w->pod->links[1];
	w->pod->forged_link.kind = "veth";
	assert_int_equal(prove(w), 0);
	assert_int_equal(w->pod->forge_type, 0); /* the forger did answer */
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "macvlan");
	world_free(w);

	/* The peer is in namespace 4 (not the node's); a forger answers the
	 * namespace-id request with 4. */
	w = world_new();
	w->pod->links[1].link_nsid = 4;
	w->pod->forge_type = RTM_GETNSID;
	w->pod->forged_nsid = 4;
	assert_int_equal(prove(w), 0);
	assert_int_equal(w->pod->forge_type, 0);
	assert_string_equal(w->f.peer, "");
	assert_contains(w->why, "the node is 0");
	world_free(w);
}

static void test_errors(void **state)
{
	(void)state;
	struct world *w = world_new();

	w->pod->links[1].name = "eth1";
	assert_int_equal(prove(w), -1);
	assert_int_equal(w->err.code, NG_E_NETNS);
	assert_contains(w->err.msg, "interface eth0 (CNI_IFNAME) is not in the pod's network namespace");
	world_free(w);

	w = world_new();
	w->pod->getlink_errno = EPERM;
	assert_int_equal(prove(w), -1);
	assert_int_equal(w->err.code, NG_E_NETNS);
	assert_contains(w->err.msg,
			"reading interface eth0 in the pod's namespace failed: Operation not permitted");
	world_free(w);

	/* The node's side unreadable: an error, never a proof. */
	w = world_new();
	w->node->getlink_errno = EPERM;
	assert_int_equal(prove(w), -1);
	assert_contains(w->err.msg, "reading the link of eth0 failed");
	assert_string_equal(w->f.peer, "");
	world_free(w);

	/* The pod's socket cannot send: nothing is read. */
	w = world_new();
	w->pod->sock.send_errno = ENOBUFS;
	assert_int_equal(prove(w), -1);
	assert_int_equal(w->err.code, NG_E_NETNS);
	world_free(w);
}

static void test_link_locals_read_again(void **state)
{
	(void)state;
	struct world *w = world_new();
	struct ng_link_facts f;
	struct ng_err err = {0};

	/* The address dump is interrupted twice (addresses changed while it
	 * ran): read again from scratch, the address counted once. */
	w->pod->addr_intr = 2;
	assert_int_equal(prove(w), 0);
	assert_int_equal(w->pod->addr_dumps, 3);
	assert_int_equal(w->f.n_link_local, 1);
	assert_string_equal(w->f.peer, "vethabc");
	/* The pod's side alone (verify, inside the pod): the same facts. */
	assert_int_equal(ng_link_read(&w->pod_nl, "eth0", &f, &err), 0);
	assert_int_equal(f.ifindex, 3);
	assert_int_equal(f.n_link_local, 1);
	assert_string_equal(f.peer, "");
	assert_int_equal(ng_link_read(&w->pod_nl, "eth9", &f, &err), -1);
	assert_contains(err.msg, "interface eth9 is not in the pod's network namespace");
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proved),
		cmocka_unit_test(test_not_a_host_peer),
		cmocka_unit_test(test_peer_must_point_back),
		cmocka_unit_test(test_ifindex_collisions),
		cmocka_unit_test(test_forged_replies_ignored),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_link_locals_read_again),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
