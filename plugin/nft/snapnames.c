#include "nft/snapnames.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/render.h"
#include "nft/render_sets.h"
#include "nft/snapelem.h"
#include "nft/snaptext.h"

static bool is_v4(const char *set)
{
	return strncmp(set, NG_SET_NAMES_V4, strlen(NG_SET_NAMES_V4)) == 0;
}

/* A name-set element (addr . proto . port) in nft's syntax, or in hex when
 * it does not have that shape. */
static void name_elem_text(const char *set, const uint8_t *key, uint32_t klen, const uint8_t *end,
			   uint32_t elen, char *out, size_t len)
{
	uint32_t keytype = (is_v4(set) ? NG_TYPE_IPADDR : NG_TYPE_IP6ADDR) << 12 |
			   NG_TYPE_INET_PROTOCOL << 6 | NG_TYPE_INET_SERVICE;

	if (!ng_elem_text(keytype, NULL, 0, key, klen, end, elen, out, len))
		ng_snap_hex(out, len, key, klen);
}

/* Checks one name-set element: a single address (a DNS answer is one
 * host: key and key end name the same address, issue 13), and a protocol
 * and port range that one of the name entries allows. */
static void check_name_elem(struct ng_snapshot *s, const char *set, const uint8_t *key, uint32_t klen,
			    const uint8_t *end, uint32_t elen)
{
	uint32_t alen = is_v4(set) ? 4 : 16;
	uint16_t lo, hi;
	uint8_t proto;
	char msg[NG_SNAP_LINE_MAX], k[200];

	name_elem_text(set, key, klen, end, elen, k, sizeof(k));
	if (klen != alen + 8 || (end && elen != klen)) {
		snprintf(msg, sizeof(msg), "set %s: element %s has the wrong key length", set, k);
		goto bad;
	}
	if (end && memcmp(key, end, alen) != 0) {
		snprintf(msg, sizeof(msg),
			 "set %s: element %s covers more than one address; a DNS answer is a single host",
			 set, k);
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
	snprintf(msg, sizeof(msg),
		 "set %s: element %s matches no DNS-name entry of the config (protocol and port)", set, k);
bad:
	ng_snap_problem(s, msg);
}

/* A name-set element as read from the kernel, kept for the cross-check of
 * the pinned set against its _ttl twin (ng_snapshot_check_names). */
static void keep_name_elem(struct ng_snapshot *s, const char *set, bool ttl, const char *key,
			   const char *text, const uint8_t *k, uint32_t klen, const uint8_t *end,
			   struct nftnl_set_elem *e)
{
	struct ng_name_elem ne = {.ttl = ttl};
	uint32_t len = 0, alen = strncmp(set, NG_SET_NAMES_V4, strlen(NG_SET_NAMES_V4)) == 0 ? 4 : 16;
	const void *ud;
	char comment[256];

	snprintf(ne.set, sizeof(ne.set), "%.*s", (int)(sizeof(ne.set) - 1), set);
	snprintf(ne.key, sizeof(ne.key), "%s", key);
	snprintf(ne.text, sizeof(ne.text), "%s", text);
	ud = nftnl_set_elem_get(e, NFTNL_SET_ELEM_USERDATA, &len);
	if (!ttl && ud) {
		ng_snap_comment(ud, len, comment, sizeof(comment));
		ne.expires = ng_expiry_parse(comment);
		if (!strncmp(comment, NG_NAME_PREFIX, strlen(NG_NAME_PREFIX)))
			snprintf(ne.dns_name, sizeof(ne.dns_name), "%s", comment + strlen(NG_NAME_PREFIX));
	}
	if (k && klen >= alen) {
		ne.lo.fam = ne.hi.fam = alen == 4 ? NG_V4 : NG_V6;
		memcpy(ne.lo.a, k, alen);
		memcpy(ne.hi.a, end ? end : k, alen);
	}
	if (ng_vec_push(&s->name_elems, &ne) < 0)
		s->oom = true;
}

bool ng_snap_is_name_set(const char *name, bool *ttl)
{
	static const char *const bases[] = {NG_SET_NAMES_V4, NG_SET_NAMES_V6};

	for (int i = 0; i < 2; i++) {
		size_t n = strlen(bases[i]);

		if (strncmp(name, bases[i], n) != 0)
			continue;
		if (name[n] == '\0' || !strcmp(name + n, NG_TTL_SUFFIX) ||
		    !strcmp(name + n, NG_RANGES_SUFFIX)) {
			/* names_vX_ranges (learned) has no twin, like names_vX learned */
			*ttl = !strcmp(name + n, NG_TTL_SUFFIX);
			return true;
		}
	}
	return false;
}

void ng_snap_name_elem(struct ng_snapshot *s, const char *set, bool ttl, const uint8_t *key, uint32_t klen,
		       const uint8_t *end, uint32_t elen, const char *hexkey, struct nftnl_set_elem *e)
{
	char text[200];

	/* Both sets: a range written into the pinned set and its _ttl twin
	 * alike would pass the twin cross-check. */
	check_name_elem(s, set, key, klen, end, elen);
	name_elem_text(set, key, klen, end, elen, text, sizeof(text));
	keep_name_elem(s, set, ttl, hexkey, text, key, klen, end && elen >= klen ? end : NULL, e);
}

/* Twins have the same key and family and come from the two sets: sorted
 * by key and family, an element's twin is among its neighbours with the
 * same key, and the check costs n log n (a pod holding thousands of
 * learned elements must not cost CHECK a quadratic walk). */
static int by_key(const void *x, const void *y)
{
	const struct ng_name_elem *a = *(const struct ng_name_elem *const *)x;
	const struct ng_name_elem *b = *(const struct ng_name_elem *const *)y;
	int c = strcmp(a->key, b->key);

	return c ? c : strncmp(a->set, b->set, strlen(NG_SET_NAMES_V4));
}

static bool same_group(const struct ng_name_elem *a, const struct ng_name_elem *b)
{
	return !strcmp(a->key, b->key) && !strncmp(a->set, b->set, strlen(NG_SET_NAMES_V4));
}

void ng_snapshot_check_names(struct ng_snapshot *s, time_t now)
{
	char msg[NG_SNAP_LINE_MAX];
	size_t n = s->name_elems.n;
	const struct ng_name_elem **order;

	if (n == 0)
		return;
	/* an array of pointers: the element size is a pointer's */
	order = malloc(n * sizeof(*order)); // NOLINT(bugprone-sizeof-expression)
	if (!order) {
		s->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = &s->name_elems.v[i];
	qsort(order, n, sizeof(*order), by_key); // NOLINT(bugprone-sizeof-expression)
	for (size_t i = 0; i < n; i++) {
		const struct ng_name_elem *a = order[i];
		bool twin = false;

		for (size_t j = i; j-- > 0 && !twin && same_group(order[j], a);)
			twin = order[j]->ttl != a->ttl;
		for (size_t j = i + 1; j < n && !twin && same_group(order[j], a); j++)
			twin = order[j]->ttl != a->ttl;
		if (twin)
			continue;
		if (a->ttl) {
			snprintf(msg, sizeof(msg),
				 "set %s: element %s was not resolved at ADD (not in the pinned set): added "
				 "by hand?",
				 a->set, a->text[0] ? a->text : a->key);
			ng_snap_problem(s, msg);
		} else if (a->expires > now + NG_EXPIRY_GRACE || a->dns_name[0]) {
			/* an expiry still ahead, or pinned for the pod's life */
			snprintf(msg, sizeof(msg),
				 "set %s%s: element %s is missing before its expiry: removed by hand?",
				 a->set, NG_TTL_SUFFIX, a->text[0] ? a->text : a->key);
			ng_snap_problem(s, msg);
		}
	}
	free(order);
}
