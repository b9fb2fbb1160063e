/* The drift watch's reading of nf_tables events (who changed which table
 * how) and the agent's fold of the plugin's invocation lines. */
#include "testutil.h"

#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <unistd.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "agent/drift.h"
#include "agent/invfold.h"

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

static void test_fold_lines_torn_and_foreign(void **state)
{
	struct ng_invfold f;
	struct ng_invtotals t;
	char longline[200];

	(void)state;
	ng_invfold_init(&f);
	memset(&t, 0, sizeof(t));
	ng_invfold_feed(&f, "ADD enforced 100\nDEL del", strlen("ADD enforced 100\nDEL del"), &t);
	assert_int_equal(t.nrows, 1);
	assert_int_equal(t.hist[0].count, 1);
	/* The torn tail completes with the next read. */
	ng_invfold_feed(&f, "eted 50\n", 8, &t);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(t.row[1].verb, "DEL");
	assert_string_equal(t.row[1].decision, "deleted");
	assert_int_equal(t.hist[1].sum_us, 50);
	/* A foreign line is counted as malformed, and so is an over-long one
	 * (resynchronised at its newline). */
	ng_invfold_feed(&f, "hello world\n", 12, &t);
	assert_int_equal(t.malformed, 1);
	memset(longline, 'x', sizeof(longline));
	longline[sizeof(longline) - 1] = '\n';
	ng_invfold_feed(&f, longline, sizeof(longline), &t);
	assert_int_equal(t.malformed, 2);
	ng_invfold_feed(&f, "ADD enforced 300\n", 17, &t);
	assert_int_equal(t.row[0].n, 2);
	assert_int_equal(t.hist[0].sum_us, 400);
}

static void test_fold_file_rotation(void **state)
{
	char dir[] = "/tmp/ng-fold-XXXXXX", path[256], old[300];
	struct ng_invfold f;
	struct ng_invtotals t;
	char line[NG_INV_LINE_MAX];
	int n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	ng_invfold_init(&f);
	memset(&t, 0, sizeof(t));
	n = ng_inv_format(line, sizeof(line), "ADD", "enforced", 1000);
	/* Enough lines to pass the rotation size. */
	for (size_t i = 0; i < NG_INVFOLD_ROTATE / (size_t)n + 2; i++)
		ng_inv_append(dir, line, (size_t)n);
	ng_invfold_run(&f, dir, 1000, &t);
	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, dir);
	snprintf(old, sizeof(old), "%s.old", path);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(old, F_OK), 0);
	/* A plugin that opened before the rename still counts... */
	{
		int fd = open(old, O_WRONLY | O_APPEND);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, line, (size_t)n), n);
		close(fd);
	}
	/* ... and the new file is read after the grace period. */
	ng_inv_append(dir, line, (size_t)n);
	ng_invfold_run(&f, dir, 1500, &t);
	ng_invfold_run(&f, dir, 1000 + NG_INVFOLD_GRACE_MS, &t);
	assert_int_equal(t.row[0].n, NG_INVFOLD_ROTATE / (size_t)n + 2 + 2);
	assert_int_equal(t.malformed, 0);
	ng_invfold_close(&f);
	unlink(path);
	unlink(old);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_parse),
		cmocka_unit_test(test_event_refusals),
		cmocka_unit_test(test_fold_lines_torn_and_foreign),
		cmocka_unit_test(test_fold_file_rotation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
