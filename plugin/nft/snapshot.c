#include "nft/snapshot.h"

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/snapnames.h"
#include "nft/snaptext.h"

static void add_line(struct ng_snapshot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_line(struct ng_snapshot *s, const char *fmt, ...)
{
	char buf[NG_SNAP_LINE_MAX], *copy;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	copy = strdup(buf);
	if (!copy || ng_vec_push(&s->lines, &copy) < 0) {
		free(copy);
		s->oom = true;
	}
}

/* Kernel dumps are filtered by table, but a reader must not depend on it:
 * objects of other tables (a user's own, say) are never ours to judge. */
static bool other_table(const struct ng_snapshot *s, const char *table)
{
	return s->table && table && strcmp(s->table, table) != 0;
}

/* A message libnftnl cannot parse must not vanish from the comparison: an
 * object we cannot read is an object we cannot vouch for. */
static void unreadable(struct ng_snapshot *s, const char *kind)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "a %s message could not be parsed", kind);
	ng_snap_problem(s, msg);
}

static void snap_table(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_table *t = nftnl_table_alloc();
	char comment[256] = "";
	uint32_t len = 0;
	const void *ud;

	if (!t || nftnl_table_nlmsg_parse(nlh, t) < 0) {
		nftnl_table_free(t);
		unreadable(s, "table");
		return;
	}
	if (other_table(s, nftnl_table_get_str(t, NFTNL_TABLE_NAME))) {
		nftnl_table_free(t);
		return;
	}
	ud = nftnl_table_get_data(t, NFTNL_TABLE_USERDATA, &len);
	ng_snap_comment(ud, len, comment, sizeof(comment));
	/* Flags matter: `dormant` unregisters every base chain of the table
	 * while leaving its rules exactly as they were. */
	add_line(s, "table %s %s flags 0x%x comment \"%s\"",
		 ng_family_name((uint8_t)nftnl_table_get_u32(t, NFTNL_TABLE_FAMILY)),
		 nftnl_table_get_str(t, NFTNL_TABLE_NAME),
		 nftnl_table_is_set(t, NFTNL_TABLE_FLAGS) ? nftnl_table_get_u32(t, NFTNL_TABLE_FLAGS) : 0,
		 comment);
	nftnl_table_free(t);
}

static void snap_obj(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_obj *o = nftnl_obj_alloc();

	if (!o || nftnl_obj_nlmsg_parse(nlh, o) < 0) {
		nftnl_obj_free(o);
		unreadable(s, "object");
		return;
	}
	if (other_table(s, nftnl_obj_get_str(o, NFTNL_OBJ_TABLE))) {
		nftnl_obj_free(o);
		return;
	}
	if (nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE) == NFT_OBJECT_LIMIT)
		/* A limit's settings are the policy (log.ratePerSecond, burst):
		 * compared; a counter's values are the traffic: not. */
		add_line(s, "object %s type %u rate %llu/%llu burst %u type %u flags 0x%x",
			 nftnl_obj_get_str(o, NFTNL_OBJ_NAME), NFT_OBJECT_LIMIT,
			 (unsigned long long)nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_RATE),
			 (unsigned long long)nftnl_obj_get_u64(o, NFTNL_OBJ_LIMIT_UNIT),
			 nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_BURST),
			 nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_TYPE),
			 nftnl_obj_get_u32(o, NFTNL_OBJ_LIMIT_FLAGS));
	else
		add_line(s, "object %s type %u", nftnl_obj_get_str(o, NFTNL_OBJ_NAME),
			 nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE));
	nftnl_obj_free(o);
}

static void snap_set(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_set *set = nftnl_set_alloc();
	char ud[256], concat[64] = "";
	uint32_t len = 0;
	const void *p;

	if (!set || nftnl_set_nlmsg_parse(nlh, set) < 0) {
		nftnl_set_free(set);
		unreadable(s, "set");
		return;
	}
	if (other_table(s, nftnl_set_get_str(set, NFTNL_SET_TABLE))) {
		nftnl_set_free(set);
		return;
	}
	p = nftnl_set_get_data(set, NFTNL_SET_USERDATA, &len);
	ng_snap_hex(ud, sizeof(ud), p, p ? len : 0);
	len = 0;
	p = nftnl_set_get_data(set, NFTNL_SET_DESC_CONCAT, &len);
	for (uint32_t i = 0; p && i < len; i++) {
		size_t o = strlen(concat);

		snprintf(concat + o, sizeof(concat) - o, "%s%u", i ? "," : "", ((const uint8_t *)p)[i]);
	}
	add_line(s, "set %s flags 0x%x keytype %u keylen %u concat [%s] size %u userdata %s",
		 nftnl_set_get_str(set, NFTNL_SET_NAME), nftnl_set_get_u32(set, NFTNL_SET_FLAGS),
		 nftnl_set_get_u32(set, NFTNL_SET_KEY_TYPE), nftnl_set_get_u32(set, NFTNL_SET_KEY_LEN),
		 concat,
		 nftnl_set_is_set(set, NFTNL_SET_DESC_SIZE) ? nftnl_set_get_u32(set, NFTNL_SET_DESC_SIZE) : 0,
		 ud);
	nftnl_set_free(set);
}

static void snap_elems(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_set *set = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	const char *name;
	bool dynamic, ttl = false;

	if (!set || nftnl_set_elems_nlmsg_parse(nlh, set) < 0) {
		nftnl_set_free(set);
		unreadable(s, "set element");
		return;
	}
	if (other_table(s, nftnl_set_get_str(set, NFTNL_SET_TABLE))) {
		nftnl_set_free(set);
		return;
	}
	name = nftnl_set_get_str(set, NFTNL_SET_NAME);
	if (!name)
		name = "?";
	dynamic = s->name_ports && ng_snap_is_name_set(name, &ttl);
	it = nftnl_set_elems_iter_create(set);
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		uint32_t klen = 0, elen = 0, flags = 0;
		const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);
		const void *end = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &elen);
		char k[160], ke[160];

		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS))
			flags = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS);
		ng_snap_hex(k, sizeof(k), key, key ? klen : 0);
		ng_snap_hex(ke, sizeof(ke), end, end ? elen : 0);
		if (dynamic) {
			char both[330];

			snprintf(both, sizeof(both), "%s-%s", k, ke);
			ng_snap_name_elem(s, name, ttl, key, key ? klen : 0, end, end ? elen : 0, both, e);
			continue;
		}
		add_line(s, "set %s element %s%s%s flags 0x%x", name, k, end ? " - " : "", ke, flags);
	}
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(set);
}

static void snap_chain(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	const char *name;
	uint32_t flags;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		nftnl_chain_free(c);
		unreadable(s, "chain");
		return;
	}
	if (other_table(s, nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE))) {
		nftnl_chain_free(c);
		return;
	}
	name = nftnl_chain_get_str(c, NFTNL_CHAIN_NAME);
	/* The kernel marks base chains NFT_CHAIN_BASE; any other flag is a change. */
	flags = nftnl_chain_is_set(c, NFTNL_CHAIN_FLAGS) ? nftnl_chain_get_u32(c, NFTNL_CHAIN_FLAGS) : 0;
	flags &= ~(uint32_t)NFT_CHAIN_BASE;
	if (nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		add_line(s, "chain %s hook %u priority %d policy %u type %s device %s flags 0x%x", name,
			 nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM),
			 nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO), nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY),
			 nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE),
			 nftnl_chain_is_set(c, NFTNL_CHAIN_DEV) ? nftnl_chain_get_str(c, NFTNL_CHAIN_DEV)
								: "-",
			 flags);
	else
		add_line(s, "chain %s flags 0x%x", name, flags);
	nftnl_chain_free(c);
}

struct expr_text {
	char buf[NG_SNAP_LINE_MAX];
	size_t len;
};

static int expr_cb(struct nftnl_expr *e, void *data)
{
	struct expr_text *t = data;
	char one[512];

	nftnl_expr_snprintf(one, sizeof(one), e, NFTNL_OUTPUT_DEFAULT, 0);
	if (t->len < sizeof(t->buf))
		t->len += (size_t)snprintf(t->buf + t->len, sizeof(t->buf) - t->len, "[ %s %s] ",
					   nftnl_expr_get_str(e, NFTNL_EXPR_NAME), one);
	return 0;
}

static unsigned next_rule_index(struct ng_snapshot *s, const char *chain)
{
	char *copy;
	unsigned zero = 0;

	for (size_t i = 0; i < s->chain_names.n; i++)
		if (strcmp(s->chain_names.v[i], chain) == 0)
			return ++s->chain_rules.v[i];
	copy = strdup(chain);
	if (!copy || ng_vec_push(&s->chain_rules, &zero) < 0) {
		free(copy);
		s->oom = true;
		return 0;
	}
	if (ng_vec_push(&s->chain_names, &copy) < 0) {
		free(copy);
		s->chain_rules.n--;
		s->oom = true;
		return 0;
	}
	return ++s->chain_rules.v[s->chain_rules.n - 1];
}

static void snap_rule(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct expr_text *t = calloc(1, sizeof(*t));
	char comment[256] = "";
	uint32_t len = 0;
	const void *ud;
	const char *chain;

	if (!r || !t || nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		nftnl_rule_free(r);
		free(t);
		unreadable(s, "rule");
		return;
	}
	if (other_table(s, nftnl_rule_get_str(r, NFTNL_RULE_TABLE))) {
		nftnl_rule_free(r);
		free(t);
		return;
	}
	chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
	nftnl_expr_foreach(r, expr_cb, t);
	ud = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &len);
	ng_snap_comment(ud, len, comment, sizeof(comment));
	add_line(s, "chain %s rule %03u: %scomment \"%s\"", chain, next_rule_index(s, chain), t->buf,
		 comment);
	free(t);
	nftnl_rule_free(r);
}

void ng_snapshot_reset(struct ng_snapshot *s)
{
	const ng_elem_vec *np = s->name_ports;
	const char *table = s->table;
	uint8_t family = s->family;

	ng_snapshot_free(s);
	memset(s, 0, sizeof(*s));
	s->name_ports = np;
	s->table = table;
	s->family = family;
}

void ng_snapshot_add(struct ng_snapshot *s, const struct nlmsghdr *nlh)
{
	uint16_t type = nlh->nlmsg_type & 0xff;

	if ((nlh->nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES)
		return;
	/* The inet and netdev tables share a name; each snapshot holds one
	 * (a replace batch's netdev DELTABLE must not empty the inet one). */
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nfgenmsg)) ||
	    ((const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh))->nfgen_family !=
		    (s->family ? s->family : NFPROTO_INET))
		return;
	switch (type) {
	case NFT_MSG_DELTABLE: ng_snapshot_reset(s); break;
	case NFT_MSG_NEWTABLE: snap_table(s, nlh); break;
	case NFT_MSG_NEWOBJ: snap_obj(s, nlh); break;
	case NFT_MSG_NEWSET: snap_set(s, nlh); break;
	case NFT_MSG_NEWSETELEM: snap_elems(s, nlh); break;
	case NFT_MSG_NEWCHAIN: snap_chain(s, nlh); break;
	case NFT_MSG_NEWRULE: snap_rule(s, nlh); break;
	default: break;
	}
}

static int batch_cb(const struct nlmsghdr *nlh, void *data)
{
	ng_snapshot_add(data, nlh);
	return 0;
}

int ng_snapshot_from_batch(struct ng_snapshot *s, const struct ng_batch *b)
{
	return ng_batch_walk(b, batch_cb, s);
}

/* Appends "line\n" when it fits whole; a detail list loses lines, never
 * halves of them. */
void ng_snapshot_free(struct ng_snapshot *s)
{
	for (size_t i = 0; i < s->lines.n; i++)
		free(s->lines.v[i]);
	for (size_t i = 0; i < s->problems.n; i++)
		free(s->problems.v[i]);
	for (size_t i = 0; i < s->chain_names.n; i++)
		free(s->chain_names.v[i]);
	ng_vec_free(&s->lines);
	ng_vec_free(&s->problems);
	ng_vec_free(&s->chain_names);
	ng_vec_free(&s->chain_rules);
	ng_vec_free(&s->name_elems);
}
