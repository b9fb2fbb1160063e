#include "kernel/hostside.h"

#include <errno.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "kernel/ruleset.h"
#include "nft/render_host.h"

/* ---- scanning the node's host-side tables ------------------------------- */

static int comment_cb(const struct nftnl_udata *attr, void *data)
{
	char *out = data;
	uint8_t len = nftnl_udata_len(attr);

	if (nftnl_udata_type(attr) == NFTNL_UDATA_TABLE_COMMENT && len > 0)
		snprintf(out, 128, "%.*s", (int)len - 1, (const char *)nftnl_udata_get(attr));
	return 0;
}

static int table_cb(const struct nlmsghdr *nlh, void *data)
{
	ng_host_tables *out = data;
	struct nftnl_table *t = nftnl_table_alloc();
	struct ng_host_table h = {0};
	char comment[128] = "";
	const char *name;
	const void *ud;
	uint32_t len = 0;
	int rc = 0;

	if (!t)
		return -1;
	if (nftnl_table_nlmsg_parse(nlh, t) < 0 || !(name = nftnl_table_get_str(t, NFTNL_TABLE_NAME)) ||
	    !ng_host_table_parse(name, h.container_id, sizeof(h.container_id), h.ifname, sizeof(h.ifname)))
		goto out;
	snprintf(h.name, sizeof(h.name), "%s", name);
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	if (ud)
		nftnl_udata_parse(ud, len, comment_cb, comment);
	if (!ng_host_comment_parse(comment, &h.ifindex, h.device, h.network, sizeof(h.network))) {
		h.ifindex = 0;
		h.device[0] = h.network[0] = '\0';
	}
	rc = ng_vec_push(out, &h);
out:
	nftnl_table_free(t);
	return rc;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	ng_host_tables *out = data;
	struct nftnl_chain *c = nftnl_chain_alloc();
	const char *table, *dev = NULL;

	if (!c)
		return -1;
	if (nftnl_chain_nlmsg_parse(nlh, c) == 0 && nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM) &&
	    (table = nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE))) {
		if (nftnl_chain_is_set(c, NFTNL_CHAIN_DEV))
			dev = nftnl_chain_get_str(c, NFTNL_CHAIN_DEV);
		else if (nftnl_chain_is_set(c, NFTNL_CHAIN_DEVICES))
			dev = ((const char *const *)nftnl_chain_get(c, NFTNL_CHAIN_DEVICES))[0];
		for (size_t i = 0; dev && i < out->n; i++)
			if (strcmp(out->v[i].name, table) == 0)
				snprintf(out->v[i].device, sizeof(out->v[i].device), "%s", dev);
	}
	nftnl_chain_free(c);
	return 0;
}

static int dump_all(struct ng_nl *nl, uint16_t type, ng_nl_dump_cb cb, void *data, struct ng_err *err)
{
	char buf[256];
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_NETDEV, NLM_F_DUMP, 0);
	return ng_nl_dump(nl, nlh, cb, data, err);
}

static int scan_once(struct ng_nl *nl, void *data, struct ng_err *err)
{
	ng_host_tables *out = data;
	int rc;

	out->n = 0;
	rc = dump_all(nl, NFT_MSG_GETTABLE, table_cb, out, err);
	/* A table whose comment does not say its device (not one this
	 * version wrote): its base chain does. */
	for (size_t i = 0; rc == 0 && i < out->n; i++)
		if (!out->v[i].device[0]) {
			rc = dump_all(nl, NFT_MSG_GETCHAIN, chain_cb, out, err);
			break;
		}
	return rc;
}

int ng_host_scan(struct ng_nl *nl, ng_host_tables *out, struct ng_err *err)
{
	/* The kernel marks a dump interrupted (NLM_F_DUMP_INTR) when anyone
	 * commits while it runs, and on a node many ADDs commit at once (each
	 * its own host-side table: 50 concurrent pods did it). The listing is
	 * only read, so read it again (nl.h), before giving up with code 11. */
	int rc = ng_nl_read_again(nl, scan_once, out, err);

	if (rc == -ENOENT)
		rc = 0;
	if (rc < 0)
		return err->code ? -1 : ng_fail(err, NG_E_INTERNAL, "out of memory reading host-side tables");
	/* Gone: no base chain, or no device of that name, or a device of that
	 * name that is not the one the table was made for. */
	for (size_t i = 0; i < out->n; i++) {
		struct ng_host_table *h = &out->v[i];
		unsigned idx = h->device[0] ? if_nametoindex(h->device) : 0;

		h->gone = idx == 0 || (h->ifindex > 0 && (int)idx != h->ifindex);
	}
	return 0;
}

/* ---- ADD, DEL, CHECK, GC ------------------------------------------------ */

struct apply_ctx {
	const struct ng_policy *p;
	bool replace;
};

static int render_apply(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	const struct apply_ctx *c = ctx;

	return ng_render_host(c->p, c->replace, NULL, 0, b, err);
}

int ng_host_apply(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err)
{
	struct apply_ctx c = {.p = p};
	bool exists = false;
	/* As in the pod: a fresh attachment is one exclusive create; a retried
	 * ADD finds its table (EEXIST) and replaces it. Nothing else of the
	 * node is read: an ADD costs the same beside 200 pods as beside none.
	 * Another attachment's table left on a device of this name (its pod
	 * went without a DEL) hooks this device too, and lets it pass (its
	 * first rule: `meta iif != N accept`); GC and the agent remove it. */
	int rc = ng_ruleset_commit(nl, table, render_apply, &c, &exists, err);

	if (rc < 0 && exists) {
		memset(err, 0, sizeof(*err));
		c.replace = true;
		rc = ng_ruleset_commit(nl, table, render_apply, &c, NULL, err);
	}
	if (rc < 0)
		ng_err_prefix(err, "host-side table on %s: ", p->host_dev);
	return rc;
}

int ng_host_replace(struct ng_nl *nl, const struct ng_policy *p, const char *table, struct ng_err *err)
{
	struct apply_ctx c = {.p = p, .replace = true};
	int rc = ng_ruleset_commit(nl, table, render_apply, &c, NULL, err);

	if (rc < 0)
		ng_err_prefix(err, "host-side table on %s: ", p->host_dev);
	return rc;
}

struct delete_ctx {
	const char *const *names;
	size_t n;
	bool must_exist;
};

static int render_delete(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	const struct delete_ctx *c = ctx;

	return ng_render_host_delete(c->names, c->n, c->must_exist, b, err);
}

int ng_host_delete(struct ng_nl *nl, const char *table, struct ng_err *err)
{
	/* A plain delete: when the table is not there (a second DEL) the
	 * kernel refuses it with ENOENT and nothing is committed, so nothing
	 * waits out an RCU grace period. */
	struct delete_ctx c = {&table, 1, true};

	if (ng_ruleset_commit(nl, table, render_delete, &c, NULL, err) == 0)
		return 0;
	if (nl->refused_errno == ENOENT) {
		memset(err, 0, sizeof(*err));
		return 0;
	}
	return -1;
}

static int render_check(const void *ctx, struct ng_batch *b, struct ng_err *err)
{
	return ng_render_host(ctx, true, NULL, 0, b, err);
}

int ng_host_check(struct ng_nl *nl, const struct ng_policy *p, const char *table, size_t *objects,
		  struct ng_err *err)
{
	static const uint8_t netdev[] = {NFPROTO_NETDEV};

	return ng_ruleset_check_rendered(nl, p, table, render_check, netdev, 1, objects, err);
}

static bool is_valid(const struct ng_host_table *h, const struct ng_attachment *valid, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (valid[i].container_id && valid[i].ifname &&
		    strcmp(valid[i].container_id, h->container_id) == 0 &&
		    strcmp(valid[i].ifname, h->ifname) == 0)
			return true;
	return false;
}

int ng_host_gc(struct ng_nl *nl, const char *network, const struct ng_attachment *valid, size_t n_valid,
	       size_t *removed, struct ng_err *err)
{
	ng_host_tables all = {0};
	NG_VEC(const char *) drop = {0};
	int rc = ng_host_scan(nl, &all, err);

	*removed = 0;
	for (size_t i = 0; rc == 0 && i < all.n; i++) {
		const struct ng_host_table *h = &all.v[i];
		const char *name = h->name;
		/* Another network's attachments are not in our list: leave them
		 * to that network's GC, unless their device is gone. */
		bool mine = strcmp(h->network, network) == 0;

		if ((h->gone || (mine && !is_valid(h, valid, n_valid))) && ng_vec_push(&drop, &name) < 0)
			rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	if (rc == 0 && drop.n > 0) {
		struct delete_ctx c = {drop.v, drop.n, false};

		rc = ng_ruleset_commit(nl, drop.v[0], render_delete, &c, NULL, err);
		if (rc == 0)
			*removed = drop.n;
	}
	ng_vec_free(&drop);
	ng_vec_free(&all);
	return rc;
}
