/* Logging refusals, rate-limited per table. See render_log.h. */
#include "nft/render_log.h"

#include <netinet/in.h> /* before linux/netfilter.h, which would define in_addr */
#include <libnftnl/object.h>
#include <libnftnl/udata.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <string.h>

#include "nft/render_chain.h"
#include "nft/rulebuild.h"

const char *ng_log_table_name(enum ng_log_table t)
{
	switch (t) {
	case NG_LOG_GUARD: return "guard";
	case NG_LOG_NODE: return "node";
	default: return "pod";
	}
}

const char *ng_log_skipped_counter(enum ng_log_table t)
{
	/* Distinct in the pod's namespace: a counter dump by table name lists
	 * the inet table's and the guard's (both boxxkite_netguard) together.
	 * The host-side table has a name of its own. No objref name may be a
	 * multiple of 4 bytes long: libnftnl puts it without its NUL (the
	 * kernel does not mind), and reading our own batch back (CHECK's
	 * expected side) would run into the next attribute. */
	return t == NG_LOG_GUARD ? "raw_log_skipped" : "log_skipped";
}

bool ng_counter_is_log_skipped(const char *name)
{
	size_t n = strlen(name), k = strlen("log_skipped");

	return n >= k && !strcmp(name + n - k, "log_skipped");
}

void ng_log_chain_name(const char *refuse_chain, char *buf, size_t len)
{
	static const char refuse[] = "refuse_";

	if (!strncmp(refuse_chain, refuse, sizeof(refuse) - 1))
		refuse_chain += sizeof(refuse) - 1;
	snprintf(buf, len, "log_%s", refuse_chain);
}

void ng_log_prefix(const struct ng_policy *p, const char *category, bool would_deny, char *buf, size_t len)
{
	/* NF_LOG_PREFIXLEN allows 127 bytes; keep it short for collectors. The
	 * reader knows the pod from where the message came (its namespace, or
	 * the host peer it came in on): the name here is for people. */
	snprintf(buf, len, NG_LOG_PREFIX_WORD "%s%s %.40s: ", would_deny ? "would_deny " : "", category,
		 p->pod);
}

int ng_render_log_objects(const struct ng_policy *p, struct ng_batch *b, enum ng_log_table t)
{
	struct nftnl_obj *o;

	if (!p->nflog)
		return 0;
	if (ng_render_counter(b, ng_log_skipped_counter(t)) < 0 || !(o = nftnl_obj_alloc()))
		return -1;
	/* limit log_limit { rate over R/second burst B packets }: it matches
	 * what is over the rate, so the rule that refers to it counts and
	 * returns exactly the packets the log does not get. */
	/* The type first: libnftnl takes a type's attributes only once it knows it. */
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_LIMIT);
	nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_RATE, p->log_rate);
	nftnl_obj_set_u64(o, NFTNL_OBJ_LIMIT_UNIT, 1); /* per second */
	nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_BURST, p->log_burst);
	nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_TYPE, NFT_LIMIT_PKTS);
	nftnl_obj_set_u32(o, NFTNL_OBJ_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	return ng_render_object(b, o, NFT_OBJECT_LIMIT, NG_LOG_LIMIT, "limit");
}

int ng_render_log_chain(const struct ng_policy *p, struct ng_batch *b, enum ng_log_table t,
			const char *log_chain, const char *category, bool would_deny, const char *what)
{
	char c[NFTNL_UDATA_COMMENT_MAXLEN], prefix[NG_LOG_PREFIX_MAX + 1];
	const char *skipped = ng_log_skipped_counter(t);
	struct ng_rb rb;

	if (!p->nflog)
		return 0;
	if (ng_render_chain(b, log_chain, -1, NULL) < 0)
		return -1;
	ng_rb_begin(&rb, b, log_chain);
	ng_rb_objref(&rb, NFT_OBJECT_LIMIT, NG_LOG_LIMIT);
	ng_rb_counter(&rb, skipped);
	ng_rb_verdict(&rb, NFT_RETURN, NULL);
	snprintf(c, sizeof(c),
		 "over log.ratePerSecond (%u/s, burst %u, for the whole table): counted in %s, not logged",
		 p->log_rate, p->log_burst, skipped);
	if (ng_rb_end(&rb, b, c) < 0)
		return -1;
	ng_log_prefix(p, category, would_deny, prefix, sizeof(prefix));
	ng_rb_begin(&rb, b, log_chain);
	ng_rb_log(&rb, prefix, p->nflog_group);
	snprintf(c, sizeof(c), "%s: logged to NFLOG group %u", what, p->nflog_group);
	return ng_rb_end(&rb, b, c);
}

/* ---- what each refuse chain says ------------------------------------------ */

const char *ng_refuse_what(enum ng_log_table t, const char *category)
{
	bool metadata = !strcmp(category, "metadata");

	if (t != NG_LOG_POD)
		return metadata ? "frame to cloud metadata" : "frame not allowed";
	if (metadata)
		return "cloud metadata";
	if (!strcmp(category, "egress"))
		return "egress not allowed";
	if (!strcmp(category, "ingress"))
		return "ingress not allowed";
	if (!strcmp(category, "source"))
		return "source address not the pod's";
	return category;
}

bool ng_refuse_rejects(enum ng_log_table t, const char *category, enum ng_deny_action deny)
{
	/* The netdev tables have nothing to answer with: they drop. Metadata
	 * is refused at once whatever denyAction says (a connect that times
	 * out is ambiguous); ingress and spoofed sources are dropped (an
	 * answer would go to a stranger). */
	if (t != NG_LOG_POD)
		return false;
	if (!strcmp(category, "metadata"))
		return true;
	return !strcmp(category, "egress") && deny == NG_DENY_REJECT;
}

void ng_refuse_verdict_comment(bool audit, bool reject, bool tcp, const char *what, char *buf, size_t len)
{
	if (audit)
		snprintf(buf, len, "%s: AUDIT (enforce.auditNamespaces): let through, not enforcing", what);
	else if (!reject)
		snprintf(buf, len, "%s: drop", what);
	else if (tcp)
		snprintf(buf, len, "%s: TCP reset, so connect() fails at once", what);
	else
		snprintf(buf, len, "%s: ICMP administratively prohibited", what);
}

void ng_refuse_comment(enum ng_log_table t, const char *category, bool would_deny, enum ng_deny_action deny,
		       uint8_t proto, char *buf, size_t len)
{
	ng_refuse_verdict_comment(would_deny, ng_refuse_rejects(t, category, deny), proto == IPPROTO_TCP,
				  ng_refuse_what(t, category), buf, len);
}
