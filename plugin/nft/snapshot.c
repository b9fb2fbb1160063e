#include "nft/snapshot.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/render.h"
#include "nft/render_sets.h"

#define LINE_MAX_ 4096

static void add_line(struct ng_snapshot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_line(struct ng_snapshot *s, const char *fmt, ...)
{
	char buf[LINE_MAX_], *copy;
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

static void hex(char *out, size_t outlen, const void *data, uint32_t len)
{
	const uint8_t *p = data;
	size_t o = 0;

	out[0] = '\0';
	for (uint32_t i = 0; p && i < len && o + 3 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", p[i]);
}

/* The comment in a rule's or table's userdata (type 0 in both). */
static void udata_comment(const void *data, uint32_t len, char *out, size_t outlen)
{
	const uint8_t *p = data;
	uint32_t off = 0;

	out[0] = '\0';
	while (p && off + 2 <= len) {
		uint8_t type = p[off], l = p[off + 1];

		if (off + 2u + l > len)
			break;
		if (type == 0 && l > 0) {
			snprintf(out, outlen, "%.*s", (int)l - 1, (const char *)p + off + 2);
			return;
		}
		off += 2u + l;
	}
}

static void problem(struct ng_snapshot *s, const char *msg);

/* A message libnftnl cannot parse must not vanish from the comparison: an
 * object we cannot read is an object we cannot vouch for. */
static void unreadable(struct ng_snapshot *s, const char *kind)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "a %s message could not be parsed", kind);
	problem(s, msg);
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
	udata_comment(ud, len, comment, sizeof(comment));
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
	hex(ud, sizeof(ud), p, p ? len : 0);
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

/* Reads protocol and port range out of a name-set key (addr . proto . port)
 * and checks them against the name entries' shapes. */
static void problem(struct ng_snapshot *s, const char *msg)
{
	char *copy = strdup(msg);

	if (!copy || ng_vec_push(&s->problems, &copy) < 0) {
		free(copy);
		s->oom = true;
	}
}

static void check_name_elem(struct ng_snapshot *s, const char *set, const uint8_t *key, uint32_t klen,
			    const uint8_t *end, uint32_t elen)
{
	uint32_t alen = strncmp(set, NG_SET_NAMES_V4, strlen(NG_SET_NAMES_V4)) == 0 ? 4 : 16;
	uint16_t lo, hi;
	uint8_t proto;
	char msg[LINE_MAX_], k[160];

	if (klen != alen + 8 || (end && elen != klen)) {
		hex(k, sizeof(k), key, klen);
		snprintf(msg, sizeof(msg), "set %s: element %s has the wrong key length", set, k);
		goto bad;
	}
	proto = key[alen];
	memcpy(&lo, key + alen + 4, 2);
	memcpy(&hi, (end ? end : key) + alen + 4, 2);
	lo = ntohs(lo);
	hi = ntohs(hi);
	for (size_t i = 0; s->name_ports && i < s->name_ports->n; i++) {
		const struct ng_elem *np = &s->name_ports->v[i];

		if (np->proto == proto && np->p_lo <= lo && hi <= np->p_hi)
			return;
	}
	hex(k, sizeof(k), key, klen);
	snprintf(msg, sizeof(msg),
		 "set %s: element %s (protocol %u, ports %u-%u) matches no DNS-name entry of the config", set,
		 k, proto, lo, hi);
bad:
	problem(s, msg);
}

/* A name-set element as read from the kernel, kept for the cross-check of
 * the pinned set against its _ttl twin (ng_snapshot_check_names). */
static void keep_name_elem(struct ng_snapshot *s, const char *set, bool ttl, const char *key,
			   struct nftnl_set_elem *e)
{
	struct ng_name_elem ne = {.ttl = ttl};
	uint32_t len = 0;
	const void *ud;
	char comment[128];

	snprintf(ne.set, sizeof(ne.set), "%.*s", (int)(sizeof(ne.set) - 1), set);
	snprintf(ne.key, sizeof(ne.key), "%s", key);
	ud = nftnl_set_elem_get(e, NFTNL_SET_ELEM_USERDATA, &len);
	if (!ttl && ud) {
		udata_comment(ud, len, comment, sizeof(comment));
		ne.expires = ng_expiry_parse(comment);
	}
	if (ng_vec_push(&s->name_elems, &ne) < 0)
		s->oom = true;
}

static bool is_name_set(const char *name, bool *ttl)
{
	static const char *const bases[] = {NG_SET_NAMES_V4, NG_SET_NAMES_V6};

	for (int i = 0; i < 2; i++) {
		size_t n = strlen(bases[i]);

		if (strncmp(name, bases[i], n) != 0)
			continue;
		if (name[n] == '\0' || !strcmp(name + n, NG_TTL_SUFFIX)) {
			*ttl = name[n] != '\0';
			return true;
		}
	}
	return false;
}

void ng_snapshot_check_names(struct ng_snapshot *s, time_t now)
{
	char msg[LINE_MAX_];

	for (size_t i = 0; i < s->name_elems.n; i++) {
		const struct ng_name_elem *a = &s->name_elems.v[i];
		bool twin = false;

		for (size_t j = 0; j < s->name_elems.n && !twin; j++) {
			const struct ng_name_elem *b = &s->name_elems.v[j];

			twin = b->ttl != a->ttl && !strcmp(a->key, b->key) &&
			       !strncmp(a->set, b->set, strlen(NG_SET_NAMES_V4));
		}
		if (twin)
			continue;
		if (a->ttl) {
			snprintf(msg, sizeof(msg),
				 "set %s: element %s was not resolved at ADD (not in the pinned set): added "
				 "by hand?",
				 a->set, a->key);
			problem(s, msg);
		} else if (a->expires > now + NG_EXPIRY_GRACE) {
			snprintf(msg, sizeof(msg),
				 "set %s%s: element %s is missing before its expiry: removed by hand?",
				 a->set, NG_TTL_SUFFIX, a->key);
			problem(s, msg);
		}
	}
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
	dynamic = s->name_ports && is_name_set(name, &ttl);
	it = nftnl_set_elems_iter_create(set);
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		uint32_t klen = 0, elen = 0, flags = 0;
		const void *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);
		const void *end = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &elen);
		char k[160], ke[160];

		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_FLAGS))
			flags = nftnl_set_elem_get_u32(e, NFTNL_SET_ELEM_FLAGS);
		hex(k, sizeof(k), key, key ? klen : 0);
		hex(ke, sizeof(ke), end, end ? elen : 0);
		if (dynamic) {
			char both[330];

			snprintf(both, sizeof(both), "%s-%s", k, ke);
			if (!ttl)
				check_name_elem(s, name, key, key ? klen : 0, end, end ? elen : 0);
			keep_name_elem(s, name, ttl, both, e);
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
	char buf[LINE_MAX_];
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
	udata_comment(ud, len, comment, sizeof(comment));
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
static void append_line(char *buf, size_t size, const char *line)
{
	size_t used = strlen(buf), n = strlen(line);

	if (used + n + 2 > size)
		return;
	memcpy(buf + used, line, n);
	buf[used + n] = '\n';
	buf[used + n + 1] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The differences found so far: a count, the first, and up to a dozen. */
struct diffs {
	char first[sizeof(((struct ng_err *)0)->msg)];
	char details[sizeof(((struct ng_err *)0)->details)];
	size_t n;
};

static void note(struct diffs *d, const char *one)
{
	if (d->n++ == 0)
		snprintf(d->first, sizeof(d->first), "%.400s", one);
	if (d->n <= 12)
		append_line(d->details, sizeof(d->details), one);
}

/* Splits "chain NAME rule NNN: BODY"; false for other lines. */
static bool rule_parts(const char *l, const char **chain, size_t *chain_len, const char **body)
{
	const char *sp, *colon;

	if (strncmp(l, "chain ", 6) != 0 || !(sp = strchr(l + 6, ' ')) || strncmp(sp, " rule ", 6) != 0 ||
	    !(colon = strstr(sp, ": ")))
		return false;
	*chain = l + 6;
	*chain_len = (size_t)(sp - *chain);
	*body = colon + 2;
	return true;
}

/* The bodies of one chain's rules, in order. */
static size_t chain_rules(const struct ng_snapshot *s, const char *chain, size_t len, const char **out,
			  size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < s->lines.n && n < cap; i++) {
		const char *c, *body;
		size_t cl;

		if (rule_parts(s->lines.v[i], &c, &cl, &body) && cl == len && !strncmp(c, chain, len))
			out[n++] = body;
	}
	return n;
}

#define MAX_RULES 256

/* Compares one chain's rules as sequences (longest common subsequence), so
 * one inserted rule is one difference, not a shift of every rule after it. */
static void diff_chain(const struct ng_snapshot *want, const struct ng_snapshot *have, const char *chain,
		       size_t len, struct diffs *d)
{
	const char *w[MAX_RULES], *h[MAX_RULES];
	size_t n = chain_rules(want, chain, len, w, MAX_RULES),
	       m = chain_rules(have, chain, len, h, MAX_RULES);
	unsigned short *lcs = calloc((n + 1) * (m + 1), sizeof(*lcs));
	char one[460];
	size_t i = 0, j = 0;

	if (!lcs) {
		note(d, "out of memory while comparing rules");
		return;
	}
#define L(a, b) lcs[(a) * (m + 1) + (b)]
	for (size_t a = n; a-- > 0;)
		for (size_t b = m; b-- > 0;)
			L(a, b) = !strcmp(w[a], h[b])          ? (unsigned short)(L(a + 1, b + 1) + 1)
				  : L(a + 1, b) >= L(a, b + 1) ? L(a + 1, b)
							       : L(a, b + 1);
	while (i < n || j < m) {
		if (i < n && j < m && !strcmp(w[i], h[j])) {
			i++;
			j++;
		} else if (j < m && (i == n || L(i, j + 1) >= L(i + 1, j))) {
			snprintf(one, sizeof(one), "unexpected rule at position %zu of chain %.*s: %.380s",
				 j + 1, (int)len, chain, h[j]);
			note(d, one);
			j++;
		} else {
			snprintf(one, sizeof(one), "missing rule %zu of chain %.*s: %.380s", i + 1, (int)len,
				 chain, w[i]);
			note(d, one);
			i++;
		}
	}
#undef L
	free(lcs);
}

/* Every chain that has rules in either snapshot, each compared once. */
static void diff_rules(const struct ng_snapshot *want, const struct ng_snapshot *have, struct diffs *d)
{
	const struct ng_snapshot *both[2] = {want, have};

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < both[k]->lines.n; i++) {
			const char *c, *body, *c2, *b2;
			size_t cl, cl2;
			bool seen = false;

			if (!rule_parts(both[k]->lines.v[i], &c, &cl, &body))
				continue;
			/* Compared already: in an earlier line of this snapshot,
			 * or (for `have`) anywhere in `want`. */
			for (size_t j = 0; j < i && !seen; j++)
				seen = rule_parts(both[k]->lines.v[j], &c2, &cl2, &b2) && cl2 == cl &&
				       !strncmp(c, c2, cl);
			for (size_t j = 0; k == 1 && j < want->lines.n && !seen; j++)
				seen = rule_parts(want->lines.v[j], &c2, &cl2, &b2) && cl2 == cl &&
				       !strncmp(c, c2, cl);
			if (!seen)
				diff_chain(want, have, c, cl, d);
		}
	}
}

int ng_snapshot_diff(struct ng_snapshot *want, struct ng_snapshot *have, struct ng_err *err)
{
	struct diffs d = {0};
	size_t i = 0, j = 0;
	const char *c, *body;
	size_t cl;

	if (want->oom || have->oom)
		return ng_fail(err, NG_E_INTERNAL, "out of memory while comparing rulesets");
	/* Rules first, in their order; then every other object as a set. */
	diff_rules(want, have, &d);
	qsort(want->lines.v, want->lines.n, sizeof(char *), cmp_str);
	qsort(have->lines.v, have->lines.n, sizeof(char *), cmp_str);
	while (i < want->lines.n || j < have->lines.n) {
		const char *w = i < want->lines.n ? want->lines.v[i] : NULL;
		const char *h = j < have->lines.n ? have->lines.v[j] : NULL;
		int cmp = !w ? 1 : !h ? -1 : strcmp(w, h);
		char one[400];

		if (w && rule_parts(w, &c, &cl, &body)) {
			i++;
			continue;
		}
		if (h && rule_parts(h, &c, &cl, &body)) {
			j++;
			continue;
		}
		if (cmp == 0) {
			i++;
			j++;
			continue;
		}
		if (cmp < 0) {
			snprintf(one, sizeof(one), "missing: %.380s", w);
			i++;
		} else {
			snprintf(one, sizeof(one), "unexpected: %.380s", h);
			j++;
		}
		note(&d, one);
	}
	for (size_t k = 0; k < have->problems.n; k++)
		note(&d, have->problems.v[k]);
	if (d.n == 0)
		return 0;
	ng_fail(err, NG_E_CHECK, "ruleset differs from the policy (%zu difference%s); first: %s", d.n,
		d.n == 1 ? "" : "s", d.first);
	ng_err_details(err, "%s", d.details);
	return -1;
}

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
