#include "kernel/ruleset.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/nlcommit.h"
#include "kernel/resolve.h"
#include "nft/render.h"
#include "nft/snapdiff.h"
#include "nft/snapnames.h"
#include "policy/dnsparse.h"
#include "policy/podcomment.h"

/* A refusal that says "not now", never "not this": the kernel applied
 * nothing (a refused batch is rolled back whole), so the same batch may be
 * sent again. EBUSY and EAGAIN come from another transaction of the node
 * (another pod's ADD, the agent's commit) holding what this one needs;
 * ERESTART from a generation that moved under a batch that named one. */
static bool transient(const struct ng_nl *nl)
{
	return nl->outcome == NG_NL_REFUSED &&
	       (nl->refused_errno == EBUSY || nl->refused_errno == EAGAIN || nl->refused_errno == ERESTART);
}

/* Builds a batch numbered from the transport (ng_nl_batch_init): a retry
 * is numbered past the first attempt. */
/* `table_exists`, when not NULL, says whether a refusal was EEXIST on
 * creating one of the tables (so the other form, replace, applies). A
 * batch is sent again once when the kernel never saw it, and when it
 * refused it for another transaction's sake (transient()), after
 * ng_nl_read_pause: NG_RULESET_TRIES attempts in all (about 0.05 s). */
int ng_ruleset_commit(struct ng_nl *nl, const char *table, ng_render_fn fn, const void *ctx,
		      bool *table_exists, struct ng_err *err)
{
	int resent = 0;

	for (int attempt = 0; attempt < NG_RULESET_TRIES; attempt++) {
		struct ng_batch b;
		int rc;

		if (attempt > 0 && nl->outcome != NG_NL_NOT_SENT) {
			memset(err, 0, sizeof(*err));
			ng_nl_read_pause(attempt);
		}
		if (ng_nl_batch_init(nl, &b, table, err) < 0)
			return -1;
		rc = fn(ctx, &b, err);
		nl->outcome = NG_NL_NOT_SENT;
		nl->refused_errno = 0;
		if (rc == 0)
			rc = ng_nl_commit(nl, &b, err);
		if (rc < 0 && table_exists && nl->refused_errno == EEXIST)
			*table_exists = ng_batch_is_excl_table(&b, b.seq_begin + 1 + nl->refused_index);
		ng_batch_free(&b);
		if (rc == 0)
			return 0;
		/* Never seen by the kernel: once more at once (a send that
		 * failed for memory); refused for another's sake: after a pause. */
		if (nl->outcome == NG_NL_NOT_SENT && err->code == NG_E_TRY_AGAIN && resent++ == 0)
			continue;
		if (!transient(nl))
			return rc;
	}
	ng_err_prefix(err, "%d attempts: ", NG_RULESET_TRIES);
	return -1;
}

static int render_create(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	return ng_render_create(ctx, b, err);
}

static int render_replace(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	return ng_render_replace(ctx, b, err);
}

static int render_delete(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	(void)ctx;
	return ng_render_delete(b, err);
}

/* The attachment a pod-side table records in its comment (policy.c); 0,
 * -ENOENT when neither table is there, or -1 with err. */
static int read_owner(struct ng_nl *nl, const char *table, char *comment, size_t len, struct ng_err *err)
{
	static const uint8_t families[] = {NFPROTO_INET, NFPROTO_NETDEV};
	int rc = -ENOENT;

	for (size_t i = 0; rc == -ENOENT && i < sizeof(families); i++) {
		rc = ng_ruleset_table_comment(nl, table, families[i], comment, len, err);
	}
	return rc;
}

int ng_ruleset_owner(struct ng_nl *nl, const char *table, const char *container_id, const char *ifname,
		     char *owner, size_t len, struct ng_err *err)
{
	char comment[256];
	struct ng_podref id;
	int rc = read_owner(nl, table, comment, sizeof(comment), err);

	if (rc < 0)
		return rc;
	snprintf(owner, len, "%s", comment);
	if (!ng_podref_from_comment(comment, &id) || !id.container_id[0])
		return 1;  /* not a comment this plugin wrote: no owner to protect */
	if (!id.ifname[0]) /* 0.1's comment: the first 12 characters of the id, no interface */
		return strncmp(id.container_id, container_id, strlen(id.container_id)) == 0 ? 1 : 0;
	return strcmp(id.container_id, container_id) == 0 && strcmp(id.ifname, ifname) == 0;
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
	rc = ng_ruleset_commit(nl, table, render_create, p, &exists, err);
	if (rc < 0 && exists) {
		/* A retried ADD replaces its own tables, never another
		 * attachment's: with two attachments of this plugin in one pod
		 * (Multus), the second would take over the namespace's one
		 * policy and guard. */
		char owner[256];
		int mine;

		memset(err, 0, sizeof(*err));
		mine = ng_ruleset_owner(nl, table, p->container_id, p->ifname, owner, sizeof(owner), err);
		if (mine < 0 && mine != -ENOENT)
			return -1;
		if (mine == 0)
			return ng_fail(
				err, NG_E_ATTACHED,
				"the pod's namespace already holds the tables of another attachment (%s): "
				"one attachment of boxxkite-netguard per pod",
				owner);
		rc = ng_ruleset_commit(nl, table, render_replace, p, NULL, err);
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

int ng_ruleset_replace(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err)
{
	char owner[256];
	int mine = ng_ruleset_owner(nl, table, p->container_id, p->ifname, owner, sizeof(owner), err);

	if (mine < 0 && mine != -ENOENT)
		return -1;
	memset(err, 0, sizeof(*err));
	if (mine == 0)
		return ng_fail(
			err, NG_E_ATTACHED,
			"the pod's namespace holds the tables of another attachment (%s): left in place",
			owner);
	return ng_ruleset_commit(nl, table, render_replace, p, NULL, err);
}

int ng_ruleset_delete(struct ng_nl *nl, const char *table, struct ng_err *err)
{
	return ng_ruleset_commit(nl, table, render_delete, NULL, NULL, err);
}

/* ---- reading the kernel's table ------------------------------------------- */

struct comment_req {
	char *buf;
	size_t len;
	bool found;
};

static int owner_cb(const struct nftnl_udata *attr, void *data)
{
	struct comment_req *c = data;
	uint8_t len = nftnl_udata_len(attr);

	if (nftnl_udata_type(attr) == NFTNL_UDATA_TABLE_COMMENT && len > 0)
		snprintf(c->buf, c->len, "%.*s", (int)len - 1, (const char *)nftnl_udata_get(attr));
	return 0;
}

static int table_comment_cb(const struct nlmsghdr *nlh, void *data)
{
	struct comment_req *c = data;
	struct nftnl_table *t = nftnl_table_alloc();
	const void *ud;
	uint32_t len = 0;

	if (!t)
		return -1;
	if (nftnl_table_nlmsg_parse(nlh, t) == 0) {
		c->found = true;
		ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
		if (ud)
			nftnl_udata_parse(ud, len, owner_cb, c);
	}
	nftnl_table_free(t);
	return 0;
}

int ng_ruleset_table_comment(struct ng_nl *nl, const char *table, uint8_t family, char *comment, size_t len,
			     struct ng_err *err)
{
	struct comment_req c = {comment, len, false};
	char buf[512];
	struct nlmsghdr *nlh;
	int rc;

	comment[0] = '\0';
	memset(buf, 0, sizeof(buf));
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETTABLE, family, NLM_F_ACK, 0);
	mnl_attr_put_strz(nlh, NFTA_TABLE_NAME, table);
	rc = ng_nl_dump(nl, nlh, table_comment_cb, &c, err);
	if (rc == 0 && !c.found)
		rc = -ENOENT;
	return rc;
}

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

int ng_ruleset_dump_set(struct ng_nl *nl, uint8_t family, const char *table, const char *set,
			ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	return dump(nl, family, NFT_MSG_GETSETELEM, NLM_F_DUMP, table, set, cb, data, err);
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
	for (int attempt = 0; attempt < NG_NL_READ_TRIES; attempt++) {
		uint32_t before, after;
		int rc;

		if (attempt > 0) {
			/* Someone committed while we read: again from scratch (nl.h). */
			ng_snapshot_reset(s);
			memset(err, 0, sizeof(*err));
			ng_nl_read_pause(attempt);
		}
		before = ng_nl_genid(nl);
		rc = snapshot_once(nl, table, s, err);
		after = ng_nl_genid(nl);
		if (rc == -EINTR)
			continue; /* a dump the kernel marked interrupted */
		if (rc != 0 || before == after || before == 0)
			return rc;
	}
	return ng_fail(err, NG_E_TRY_AGAIN, "the ruleset kept changing while it was being read");
}

/* One family's table: what the batch leaves there against the kernel's. */
int ng_ruleset_check_batch(struct ng_nl *nl, const struct ng_policy *p, const struct ng_batch *b,
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
		rc = ng_fail(err, NG_E_CHECK, "table %s %s is missing from the %s network namespace", fname,
			     table, strncmp(table, "ngh.", 4) == 0 ? "node's" : "pod's");
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

int ng_ruleset_check_rendered(struct ng_nl *nl, const struct ng_policy *p, const char *table, ng_render_fn fn,
			      const uint8_t *families, size_t n_families, size_t *objects, struct ng_err *err)
{
	struct ng_batch b;
	size_t n = 0;
	int rc;

	if (ng_batch_init(&b, table, 1, err) < 0)
		return -1;
	rc = fn(p, &b, err);
	for (size_t i = 0; rc == 0 && i < n_families; i++)
		rc = ng_ruleset_check_batch(nl, p, &b, table, families[i], &n, err);
	ng_batch_free(&b);
	if (objects)
		*objects = n;
	return rc;
}

/* Does the current answer hold every address of [lo, hi] (at most 256)? */
static bool answer_holds(const struct ng_resolved_name *r, const struct ng_ip *lo, const struct ng_ip *hi,
			 struct ng_ip *missing)
{
	struct ng_ip ip = *lo;

	for (int n = 0; n < 256; n++) {
		bool found = false;

		for (size_t i = 0; i < r->answers.n && !found; i++)
			found = ng_ip_eq(&r->answers.v[i].ip, &ip);
		if (!found) {
			*missing = ip;
			return false;
		}
		if (ng_ip_eq(&ip, hi) || !ng_ip_inc(&ip))
			break;
	}
	return true;
}

int ng_ruleset_check_answers(struct ng_nl *nl, const struct ng_policy *p, const char *table,
			     struct ng_err *err)
{
	struct ng_snapshot have = {.table = table, .family = NFPROTO_INET, .name_ports = &p->name_ports};
	long budget = NG_RESOLVE_BUDGET_MS;
	int rc;

	if (p->learn || p->name_ports.n == 0)
		return 0;
	rc = ng_ruleset_snapshot(nl, table, &have, err);
	for (size_t i = 0; rc == 0 && i < have.name_elems.n; i++) {
		const struct ng_name_elem *a = &have.name_elems.v[i];
		struct ng_resolved_name r = {0};
		struct ng_ip missing;
		char ip[NG_IP_STRLEN];
		bool asked = false;

		if (a->ttl || !a->dns_name[0])
			continue;
		for (size_t j = 0; j < i && !asked; j++)
			asked = !have.name_elems.v[j].ttl &&
				!strcmp(have.name_elems.v[j].dns_name, a->dns_name);
		if (asked)
			continue; /* one question per name: its elements are checked below */
		snprintf(r.name, sizeof(r.name), "%s", a->dns_name);
		if (ng_resolve_system(a->dns_name, budget, &r, err) < 0) {
			ng_err_prefix(err, "DNS name %s, pinned at ADD: ", a->dns_name);
			err->code = NG_E_CHECK;
			rc = -1;
		}
		for (size_t j = i; rc == 0 && j < have.name_elems.n; j++) {
			const struct ng_name_elem *b = &have.name_elems.v[j];

			if (b->ttl || strcmp(b->dns_name, a->dns_name) != 0 ||
			    answer_holds(&r, &b->lo, &b->hi, &missing))
				continue;
			ng_ip_format(&missing, ip, sizeof(ip));
			rc = ng_fail(
				err, NG_E_CHECK,
				"DNS name %s no longer answers %s (resolved at ADD, still allowed for the "
				"pod's life): the pod's resolver now gives it other addresses; re-create the "
				"pod, or use egress.names \"learn\"",
				a->dns_name, ip);
		}
		ng_vec_free(&r.answers);
	}
	ng_snapshot_free(&have);
	return rc == -ENOENT ? 0 : rc;
}

int ng_ruleset_check(struct ng_nl *nl, const struct ng_policy *p, const char *table, size_t *objects,
		     struct ng_err *err)
{
	static const uint8_t both[] = {NFPROTO_INET, NFPROTO_NETDEV};

	return ng_ruleset_check_rendered(nl, p, table, render_replace, both, sizeof(both), objects, err);
}
