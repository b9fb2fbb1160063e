#include "kernel/ruleset.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/netns.h"
#include "nft/render.h"
#include "nft/snapdiff.h"
#include "nft/snapnames.h"

/* Builds a batch numbered from nl->seq and moves nl->seq past it, so that a
 * retry never confuses a late reply of the first attempt with its own. */
typedef int (*render_fn)(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err);

/* `table_exists`, when not NULL, says whether a refusal was EEXIST on
 * creating one of the tables (so the other form, replace, applies). A
 * batch is sent again only when the kernel never saw it. */
static int commit(struct ng_nl *nl, const struct ng_policy *p, const char *table, render_fn fn,
		  bool *table_exists, struct ng_err *err)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		struct ng_batch b;
		int rc;

		if (ng_batch_init(&b, table, nl->seq, err) < 0)
			return -1;
		rc = fn(p, &b, err);
		/* Past END and the marker (kernel/nl.c) */
		nl->seq = b.seq_next + 2;
		nl->outcome = NG_NL_NOT_SENT;
		if (rc == 0)
			rc = ng_nl_commit(nl, &b, err);
		if (rc < 0 && table_exists && nl->refused_errno == EEXIST)
			*table_exists = ng_batch_is_excl_table(&b, b.seq_begin + 1 + nl->refused_index);
		ng_batch_free(&b);
		if (rc == 0 || err->code != NG_E_TRY_AGAIN || nl->outcome != NG_NL_NOT_SENT)
			return rc;
	}
	return -1;
}

static int render_delete(const struct ng_policy *p, struct ng_batch *b, struct ng_err *err)
{
	(void)p;
	return ng_render_delete(b, err);
}

int ng_ruleset_apply(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err)
{
	/* A fresh pod first: one exclusive create. If the table is already
	 * there (a retried ADD), the kernel refuses that first message with
	 * EEXIST and applies nothing; then replace it, again in one
	 * transaction. Either way the pod holds all of the table or none. */
	bool exists = false;
	int rc;

	/* EEXIST on the inet table (the first message) or, when only that one
	 * is missing, on the netdev guard's; anywhere else it is a refusal. */
	rc = commit(nl, p, table, ng_render_create, &exists, err);
	if (rc < 0 && exists) {
		memset(err, 0, sizeof(*err));
		rc = commit(nl, p, table, ng_render_replace, NULL, err);
	}
	if (rc < 0 && nl->outcome == NG_NL_UNKNOWN) {
		/* All or nothing, and which is unknown: make it nothing, so the
		 * failed ADD leaves no table (a retry starts from scratch). */
		struct ng_err derr = {0};
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		if (ng_ruleset_delete(nl, table, &derr) == 0)
			ng_fail(err, NG_E_TRY_AGAIN, "%s; the pod's tables were removed, retry the ADD", msg);
		else
			ng_fail(err, NG_E_TRY_AGAIN, "%s; removing the pod's tables failed too: %s", msg,
				derr.msg);
	}
	return rc;
}

int ng_ruleset_delete(struct ng_nl *nl, const char *table, struct ng_err *err)
{
	return commit(nl, NULL, table, render_delete, NULL, err);
}

/* ---- reading the kernel's table ------------------------------------------- */

static int snap_cb(const struct nlmsghdr *nlh, void *data)
{
	ng_snapshot_add(data, nlh);
	return 0;
}

/* Set replies go to the snapshot, and their names are kept so each set's
 * elements can be asked for next. */
struct set_dump {
	struct ng_snapshot *snap;
	NG_VEC(char *) names;
};

static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct set_dump *d = data;
	struct nftnl_set *s = nftnl_set_alloc();
	char *copy;

	if (!s)
		return -1;
	ng_snapshot_add(d->snap, nlh);
	if (nftnl_set_nlmsg_parse(nlh, s) == 0 && nftnl_set_get_str(s, NFTNL_SET_NAME)) {
		copy = strdup(nftnl_set_get_str(s, NFTNL_SET_NAME));
		if (!copy || ng_vec_push(&d->names, &copy) < 0) {
			free(copy);
			nftnl_set_free(s);
			return -1;
		}
	}
	nftnl_set_free(s);
	return 0;
}

/* One GET request for `table`, each reply added to the snapshot. */
static int dump(struct ng_nl *nl, uint8_t family, uint16_t type, uint16_t flags, const char *table,
		const char *set, ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;

	/* libmnl leaves attribute padding as it finds it: never send stack bytes. */
	memset(buf, 0, sizeof(buf));
	nlh = nftnl_nlmsg_build_hdr(buf, type, family, flags, 0);

	switch (type) {
	case NFT_MSG_GETTABLE: mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, table); break;
	case NFT_MSG_GETCHAIN: mnl_attr_put_strz(nlh, NFTA_CHAIN_TABLE, table); break;
	case NFT_MSG_GETRULE: mnl_attr_put_strz(nlh, NFTA_RULE_TABLE, table); break;
	case NFT_MSG_GETSET: mnl_attr_put_strz(nlh, NFTA_SET_TABLE, table); break;
	case NFT_MSG_GETSETELEM:
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, table);
		mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
		break;
	case NFT_MSG_GETOBJ: mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, table); break;
	}
	return ng_nl_dump(nl, nlh, cb, data, err);
}

static int snapshot_once(struct ng_nl *nl, const char *table, struct ng_snapshot *s, struct ng_err *err)
{
	static const uint16_t kinds[] = {NFT_MSG_GETOBJ, NFT_MSG_GETCHAIN, NFT_MSG_GETRULE};
	struct set_dump sets = {.snap = s};
	uint8_t fam = s->family ? s->family : NFPROTO_INET;
	int rc;

	rc = dump(nl, fam, NFT_MSG_GETTABLE, NLM_F_ACK, table, NULL, snap_cb, s, err);
	if (rc != 0)
		return rc;
	rc = dump(nl, fam, NFT_MSG_GETSET, NLM_F_DUMP, table, NULL, set_cb, &sets, err);
	for (size_t i = 0; rc == 0 && i < sets.names.n; i++)
		rc = dump(nl, fam, NFT_MSG_GETSETELEM, NLM_F_DUMP, table, sets.names.v[i], snap_cb, s, err);
	for (size_t i = 0; rc == 0 && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		rc = dump(nl, fam, kinds[i], NLM_F_DUMP, table, NULL, snap_cb, s, err);
	for (size_t i = 0; i < sets.names.n; i++)
		free(sets.names.v[i]);
	ng_vec_free(&sets.names);
	/* The table vanished between two requests. */
	if (rc == -ENOENT)
		return -ENOENT;
	return rc;
}

int ng_ruleset_snapshot(struct ng_nl *nl, const char *table, struct ng_snapshot *s, struct ng_err *err)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		uint32_t before = ng_nl_genid(nl), after;
		int rc;

		rc = snapshot_once(nl, table, s, err);
		after = ng_nl_genid(nl);
		if (rc != 0 || before == after || before == 0)
			return rc;
		/* Someone committed while we read: read again from scratch. */
		ng_snapshot_reset(s);
	}
	return ng_fail(err, NG_E_TRY_AGAIN, "the ruleset kept changing while it was being read");
}

/* One family's table: what the batch leaves there against the kernel's. */
static int check_family(struct ng_nl *nl, const struct ng_policy *p, const struct ng_batch *b,
			const char *table, uint8_t family, size_t *objects, struct ng_err *err)
{
	struct ng_snapshot want = {.table = table, .family = family},
			   have = {.table = table, .family = family, .name_ports = &p->name_ports};
	const char *fname = ng_family_name(family);
	int rc = ng_snapshot_from_batch(&want, b);

	if (rc == 0)
		rc = ng_ruleset_snapshot(nl, table, &have, err);
	if (rc == -ENOENT && want.lines.n == 0) {
		rc = 0; /* no guard wanted, none there */
	} else if (rc == -ENOENT) {
		rc = ng_fail(err, NG_E_CHECK, "table %s %s is missing from the pod's network namespace",
			     fname, table);
	} else if (rc == 0) {
		ng_snapshot_check_names(&have, time(NULL));
		rc = ng_snapshot_diff(&want, &have, err);
		if (rc < 0 && family != NFPROTO_INET)
			ng_err_prefix(err, "table %s: ", fname);
	}
	*objects += want.lines.n;
	ng_snapshot_free(&want);
	ng_snapshot_free(&have);
	return rc;
}

int ng_ruleset_check(struct ng_nl *nl, const struct ng_policy *p, const char *table, size_t *objects,
		     struct ng_err *err)
{
	struct ng_batch b;
	size_t n = 0;
	int rc;

	if (ng_batch_init(&b, table, 1, err) < 0)
		return -1;
	rc = ng_render_replace(p, &b, err);
	if (rc == 0)
		rc = check_family(nl, p, &b, table, NFPROTO_INET, &n, err);
	if (rc == 0)
		rc = check_family(nl, p, &b, table, NFPROTO_NETDEV, &n, err);
	ng_batch_free(&b);
	if (objects)
		*objects = n;
	return rc;
}
