/* The drift watch's reading of nf_tables events: who changed which table
 * how (kernel/nftevents.c). */
#include "testutil.h"

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "kernel/nftevents.h"

static struct nlmsghdr *event(char *buf, uint16_t type, uint8_t family, uint32_t portid, const char *table,
			      uint16_t oattr, const char *object)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *g;

	nlh->nlmsg_type = (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | type);
	nlh->nlmsg_pid = portid;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = family;
	if (table)
		mnl_attr_put_strz(nlh, 1, table);
	if (object)
		mnl_attr_put_strz(nlh, oattr, object);
	return nlh;
}

static void test_event_parse(void **state)
{
	char buf[8192] = {0};
	struct ng_nft_event ev;

	(void)state;
	assert_int_equal(ng_nft_event_parse(event(buf, NFT_MSG_NEWRULE, NFPROTO_INET, 4242,
						  "boxxkite_netguard", NFTA_RULE_CHAIN, "egress"),
					    &ev),
			 0);
	assert_int_equal(ev.type, NFT_MSG_NEWRULE);
	assert_int_equal(ev.family, NFPROTO_INET);
	assert_int_equal(ev.portid, 4242);
	assert_string_equal(ev.table, "boxxkite_netguard");
	assert_string_equal(ev.object, "egress");
	assert_string_equal(ng_nft_event_what(ev.type), "rule added");

	memset(buf, 0, sizeof(buf));
	assert_int_equal(
		ng_nft_event_parse(event(buf, NFT_MSG_NEWSETELEM, NFPROTO_NETDEV, 7, "boxxkite_netguard",
					 NFTA_SET_ELEM_LIST_SET, "names_v4_ttl"),
				   &ev),
		0);
	assert_int_equal(ev.family, NFPROTO_NETDEV);
	assert_string_equal(ev.object, "names_v4_ttl");
	assert_string_equal(ng_nft_event_what(ev.type), "set element added");

	memset(buf, 0, sizeof(buf));
	assert_int_equal(ng_nft_event_parse(event(buf, NFT_MSG_DELTABLE, NFPROTO_INET, 1, "t", 0, NULL), &ev),
			 0);
	assert_string_equal(ng_nft_event_what(ev.type), "table deleted");
	assert_string_equal(ev.object, "");
}

static void test_event_refusals(void **state)
{
	char buf[8192] = {0};
	char big[300]; /* longer than NFT_NAME_MAXLEN (256) */
	struct ng_nft_event ev;
	struct nlmsghdr *nlh;

	(void)state;
	/* The generation message ends a transaction: not a change. */
	assert_int_equal(
		ng_nft_event_parse(event(buf, NFT_MSG_NEWGEN, NFPROTO_UNSPEC, 1, NULL, 0, NULL), &ev), -1);
	/* No table named. */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(ng_nft_event_parse(event(buf, NFT_MSG_NEWRULE, NFPROTO_INET, 1, NULL, 0, NULL), &ev),
			 -1);
	/* Another subsystem (conntrack). */
	memset(buf, 0, sizeof(buf));
	nlh = event(buf, NFT_MSG_NEWRULE, NFPROTO_INET, 1, "boxxkite_netguard", 0, NULL);
	nlh->nlmsg_type = (uint16_t)((NFNL_SUBSYS_CTNETLINK << 8) | 0);
	assert_int_equal(ng_nft_event_parse(nlh, &ev), -1);
	/* A table name not NUL-terminated inside its attribute. */
	memset(buf, 0, sizeof(buf));
	nlh = event(buf, NFT_MSG_NEWRULE, NFPROTO_INET, 1, NULL, 0, NULL);
	mnl_attr_put(nlh, 1, 4, "abcd");
	assert_int_equal(ng_nft_event_parse(nlh, &ev), -1);
	/* A name longer than any table name: not taken as one. */
	memset(buf, 0, sizeof(buf));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(ng_nft_event_parse(event(buf, NFT_MSG_NEWRULE, NFPROTO_INET, 1, big, 0, NULL), &ev),
			 -1);
	/* Too short for its nfgenmsg. */
	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (uint16_t)((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE);
	assert_int_equal(ng_nft_event_parse(nlh, &ev), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_parse),
		cmocka_unit_test(test_event_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
