/* floor: the kernel floor of a pod firewall, as its own process.
 *
 *   floor add NETNS_PATH [--ct]   one transaction: an empty inet table with two
 *                                 hooked base chains (output, input), i.e.
 *                                   table inet ngb_floor {
 *                                     chain out { type filter hook output priority 0; policy accept; }
 *                                     chain in  { type filter hook input priority 0; policy accept; }
 *                                   }
 *                                 --ct adds `ct state established,related accept`
 *                                 to each chain (the conntrack hooks any stateful
 *                                 ruleset makes the kernel register: a decomposition
 *                                 point between the floor and a real ruleset)
 *   floor del NETNS_PATH          one transaction: delete table inet ngb_floor
 *
 * It does what any in-process implementation must do and nothing more: open
 * the namespace, enter it, open a netfilter netlink socket there, return,
 * send one batch, read one ack per message. Exit 0 on success; on failure a
 * line on stderr and exit 1. Part of `make bench` (test/bench/).
 */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TABLE "ngb_floor"

static void die(const char *what)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct mnl_socket *open_in_netns(const char *path)
{
	int target = open(path, O_RDONLY | O_CLOEXEC);
	int orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	struct mnl_socket *nl;

	if (target < 0 || orig < 0)
		die("open netns");
	if (setns(target, CLONE_NEWNET) < 0)
		die("setns pod");
	nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!nl)
		die("netlink socket");
	if (setns(orig, CLONE_NEWNET) < 0) {
		perror("floor: setns back");
		abort();
	}
	close(target);
	close(orig);
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		die("bind");
	return nl;
}

static uint32_t seq;
static unsigned nmsg; /* body messages, each asks for an ack */

static void put_table(struct mnl_nlmsg_batch *b, uint16_t type, uint16_t flags)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	nftnl_table_set_str(t, NFTNL_TABLE_NAME, TABLE);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), type, NFPROTO_INET, flags | NLM_F_ACK, seq++);
	nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	mnl_nlmsg_batch_next(b);
	nmsg++;
}

static void put_chain(struct mnl_nlmsg_batch *b, const char *name, uint32_t hook)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, TABLE);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
	nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
	nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWCHAIN, NFPROTO_INET,
				    NLM_F_CREATE | NLM_F_ACK, seq++);
	nftnl_chain_nlmsg_build_payload(nlh, c);
	nftnl_chain_free(c);
	mnl_nlmsg_batch_next(b);
	nmsg++;
}

/* ct state established,related accept */
static void put_ct_rule(struct mnl_nlmsg_batch *b, const char *chain)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct nftnl_expr *e;
	struct nlmsghdr *nlh;
	uint32_t mask = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED), zero = 0;

	nftnl_rule_set_str(r, NFTNL_RULE_TABLE, TABLE);
	nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
	e = nftnl_expr_alloc("ct");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("bitwise");
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, 4);
	nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &zero, 4);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("cmp");
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, NFT_CMP_NEQ);
	nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, &zero, 4);
	nftnl_rule_add_expr(r, e);
	e = nftnl_expr_alloc("immediate");
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, NF_ACCEPT);
	nftnl_rule_add_expr(r, e);
	nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWRULE, NFPROTO_INET,
				    NLM_F_CREATE | NLM_F_APPEND | NLM_F_ACK, seq++);
	nftnl_rule_nlmsg_build_payload(nlh, r);
	nftnl_rule_free(r);
	mnl_nlmsg_batch_next(b);
	nmsg++;
}

int main(int argc, char **argv)
{
	static char buf[32768], rbuf[32768];
	struct mnl_nlmsg_batch *b;
	struct mnl_socket *nl;
	unsigned acks = 0;
	uint32_t portid;
	int add, ct = 0, replace = 0;

	if (argc < 3 || (strcmp(argv[1], "add") && strcmp(argv[1], "del"))) {
		fprintf(stderr, "usage: floor add|del NETNS_PATH [--ct] [--replace]\n");
		return 2;
	}
	add = strcmp(argv[1], "add") == 0;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--ct") == 0)
			ct = 1;
		else if (strcmp(argv[i], "--replace") == 0)
			replace = 1;
		else {
			fprintf(stderr, "floor: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	nl = open_in_netns(argv[2]);
	portid = mnl_socket_get_portid(nl);
	seq = (uint32_t)time(NULL);

	b = mnl_nlmsg_batch_start(buf, sizeof(buf));
	nftnl_batch_begin(mnl_nlmsg_batch_current(b), seq++);
	mnl_nlmsg_batch_next(b);
	uint32_t first = seq;
	if (add) {
		if (replace) { /* create-if-missing, delete: what a replace-style ADD sends first */
			put_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE);
			put_table(b, NFT_MSG_DELTABLE, 0);
		}
		put_table(b, NFT_MSG_NEWTABLE, NLM_F_CREATE);
		put_chain(b, "out", NF_INET_LOCAL_OUT);
		put_chain(b, "in", NF_INET_LOCAL_IN);
		if (ct) {
			put_ct_rule(b, "out");
			put_ct_rule(b, "in");
		}
	} else {
		put_table(b, NFT_MSG_DELTABLE, 0);
	}
	nftnl_batch_end(mnl_nlmsg_batch_current(b), seq++);
	mnl_nlmsg_batch_next(b);

	if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b)) < 0)
		die("sendto");
	while (acks < nmsg) {
		ssize_t n = mnl_socket_recvfrom(nl, rbuf, sizeof(rbuf));

		if (n < 0)
			die("recv");
		/* One reply per body message (each asked for an ack): read
		 * them all, so an error on any message is seen. mnl_cb_run
		 * returns -1 with errno set for an error reply. */
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)rbuf;
		int left = (int)n;

		for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
			if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_seq < first ||
			    nlh->nlmsg_seq >= first + nmsg)
				continue;
			if (mnl_cb_run(nlh, nlh->nlmsg_len, nlh->nlmsg_seq, portid, NULL, NULL) < 0) {
				fprintf(stderr, "floor: message %u refused: %s\n", nlh->nlmsg_seq - first,
					strerror(errno));
				return 1;
			}
			acks++;
		}
	}
	mnl_nlmsg_batch_stop(b);
	mnl_socket_close(nl);
	return 0;
}
