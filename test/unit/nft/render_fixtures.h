/* Shared by the renderer's unit tests: a sample policy, the batch's
 * messages collected, and one chain's rules as text. */
#ifndef NG_TEST_RENDER_FIXTURES_H
#define NG_TEST_RENDER_FIXTURES_H

#include "testutil.h"

#include "policy/metadata.h" // IWYU pragma: export

#include <libgen.h> // IWYU pragma: export
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h> // IWYU pragma: export
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "nft/batch.h"
#include "nft/render.h"
#include "nft/snapdiff.h"  // IWYU pragma: export
#include "nft/snapnames.h" // IWYU pragma: export
#include "nft/snapshot.h"  // IWYU pragma: export

__attribute__((unused)) static void add_ip(ng_ip_vec *v, const char *s)
{
	struct ng_ip ip;

	assert_int_equal(ng_ip_parse(s, &ip), 0);
	assert_int_equal(ng_vec_push(v, &ip), 0);
}

__attribute__((unused)) static void add_elem(ng_elem_vec *v, const char *lo, const char *hi, uint8_t proto,
					     uint16_t plo, uint16_t phi, uint32_t timeout)
{
	struct ng_elem e = {.proto = proto, .p_lo = plo, .p_hi = phi, .timeout = timeout};

	assert_int_equal(ng_ip_parse(lo, &e.lo), 0);
	assert_int_equal(ng_ip_parse(hi, &e.hi), 0);
	assert_int_equal(ng_vec_push(v, &e), 0);
}

/* A small policy touching every set. */
__attribute__((unused)) static void sample_policy(struct ng_policy *p, enum ng_deny_action deny)
{
	memset(p, 0, sizeof(*p));
	p->deny = deny;
	snprintf(p->comment, sizeof(p->comment), "test pod");
	add_ip(&p->metadata[0], "169.254.169.254");
	add_ip(&p->metadata[1], "fd00:ec2::254");
	add_elem(&p->dns[0], "10.96.0.10", "10.96.0.10", 17, 53, 53, 0);
	add_elem(&p->dns[0], "10.96.0.10", "10.96.0.10", 6, 53, 53, 0);
	add_elem(&p->allow[0], "10.20.0.0", "10.20.255.255", 6, 443, 443, 0);
	add_elem(&p->allow[1], "fd00:20::", "fd00:20::ffff:ffff:ffff:ffff", 17, 5000, 5010, 0);
	add_elem(&p->names[0], "10.50.0.1", "10.50.0.1", 6, 443, 443, 3600);
	p->names_at = 1796000000; /* a fixed "now", for the expiry comments */
	add_elem(&p->nd6, "fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0, 135, 136, 0);
	add_elem(&p->ingress[0], "10.244.0.0", "10.244.255.255", 0, 8080, 8080, 0);
	add_ip(&p->node[0], "10.244.1.1");
	add_ip(&p->pod4, "10.244.1.5");
	add_ip(&p->mld6, "ff02::1:ff00:5");
	p->raw_guard = true;
	snprintf(p->ifname, sizeof(p->ifname), "eth0");
}

struct msgs {
	uint16_t type[256];
	uint8_t family[256];
	int n;
};

/* The nf_tables family a message is about (BEGIN/END: AF_UNSPEC). */
__attribute__((unused)) static uint8_t fam_of(const struct nlmsghdr *nlh)
{
	return ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family;
}

__attribute__((unused)) static int collect(const struct nlmsghdr *nlh, void *data)
{
	struct msgs *m = data;

	if (m->n < 256) {
		m->family[m->n] = fam_of(nlh);
		m->type[m->n++] = nlh->nlmsg_type;
	}
	return 0;
}

__attribute__((unused)) static uint16_t nft(uint16_t t)
{
	return (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | t);
}

struct chain_rules {
	const char *chain;
	uint8_t family; /* 0: inet */
	char comments[32][128];
	char exprs[32][2048];
	int n;
};

__attribute__((unused)) static int expr_cb(struct nftnl_expr *e, void *data)
{
	char *buf = data, one[512];

	nftnl_expr_snprintf(one, sizeof(one), e, NFTNL_OUTPUT_DEFAULT, 0);
	strncat(buf, "[ ", 2047 - strlen(buf));
	strncat(buf, nftnl_expr_get_str(e, NFTNL_EXPR_NAME), 2047 - strlen(buf));
	strncat(buf, " ", 2047 - strlen(buf));
	strncat(buf, one, 2047 - strlen(buf));
	strncat(buf, "] ", 2047 - strlen(buf));
	return 0;
}

__attribute__((unused)) static int rules_cb(const struct nlmsghdr *nlh, void *data)
{
	struct chain_rules *c = data;
	struct nftnl_rule *r;
	uint32_t len = 0;
	const uint8_t *ud;

	if (nlh->nlmsg_type != nft(NFT_MSG_NEWRULE) || fam_of(nlh) != (c->family ? c->family : NFPROTO_INET))
		return 0;
	r = nftnl_rule_alloc();
	assert_int_equal(nftnl_rule_nlmsg_parse(nlh, r), 0);
	if (!strcmp(nftnl_rule_get_str(r, NFTNL_RULE_CHAIN), c->chain) && c->n < 32) {
		ud = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len);
		/* userdata: type 0 (comment), length, NUL-terminated text */
		assert_true(len > 2 && ud[0] == 0);
		snprintf(c->comments[c->n], 128, "%s", (const char *)ud + 2);
		c->exprs[c->n][0] = '\0';
		nftnl_expr_foreach(r, expr_cb, c->exprs[c->n]);
		c->n++;
	}
	nftnl_rule_free(r);
	return 0;
}

__attribute__((unused)) static void render_chain(enum ng_deny_action deny, struct chain_rules *c)
{
	struct ng_policy p;
	struct ng_batch b;
	struct ng_err err = {0};

	sample_policy(&p, deny);
	assert_int_equal(ng_batch_init(&b, NG_TABLE, 1, &err), 0);
	assert_int_equal(ng_render_replace(&p, &b, &err), 0);
	assert_int_equal(ng_batch_walk(&b, rules_cb, c), 0);
	ng_batch_free(&b);
	ng_policy_free(&p);
}

/* The packet-socket guard: a netdev egress chain on the pod's interface
 * that lets a frame out only when the frame's own EtherType and the
 * kernel's parse agree, then refuses the metadata endpoints first (as the
 * policy table does, so no allow set can reach them), then lets out only
 * the egress sets and replies that never carry a bare SYN. */

#endif
