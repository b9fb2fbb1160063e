#include "node/statustable.h"

#include <inttypes.h>
#include <string.h>

static bool is_enforced(const struct ng_view_pod *p)
{
	return !strcmp(p->decision, "enforced");
}

static void age(int64_t ms, char *out, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 120000)
		snprintf(out, len, "%" PRId64 "s", ms / 1000);
	else if (ms < 7200000)
		snprintf(out, len, "%" PRId64 "m", ms / 60000);
	else
		snprintf(out, len, "%" PRId64 "h", ms / 3600000);
}

static void tables(const struct ng_view_pod *p, char *out, size_t len)
{
	if (!is_enforced(p)) {
		snprintf(out, len, "-");
		return;
	}
	if (!p->read_ok) {
		snprintf(out, len, "?");
		return;
	}
	snprintf(out, len, "%s%s%s", p->pod_present ? "pod" : "MISSING-pod", p->has_node_side ? "+" : "",
		 !p->has_node_side ? ""
		 : p->node_present ? "node"
				   : "MISSING-node");
}

static void check(const struct ng_view_pod *p, int64_t now, char *out, size_t len)
{
	char a[16];

	if (!is_enforced(p)) {
		snprintf(out, len, "-");
		return;
	}
	if (!p->checked) {
		snprintf(out, len, "%s", p->read_error[0] ? "cannot-check" : "not-yet");
		return;
	}
	age(now - p->last_check_ms, a, sizeof(a));
	if (p->in_sync)
		snprintf(out, len, "in-sync(%s)", a);
	else
		snprintf(out, len, "DIFFERS(%s)", a);
}

static bool same_category(const struct ng_view_counter *a, const struct ng_view_counter *b)
{
	return a->would_deny == b->would_deny && !strcmp(a->category, b->category);
}

/* egress=3,raw=0: summed over tables, categories in first-seen order; an
 * audited pod's would-deny counts as would_deny:egress=3. */
static void denied(const struct ng_view_pod *p, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < p->counters.n; i++) {
		uint64_t sum = 0;
		bool first = true;

		for (size_t k = 0; k < i && first; k++)
			first = !same_category(&p->counters.v[k], &p->counters.v[i]);
		if (!first)
			continue;
		for (size_t k = i; k < p->counters.n; k++)
			if (same_category(&p->counters.v[k], &p->counters.v[i]))
				sum += p->counters.v[k].packets;
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s%s=%" PRIu64, n ? "," : "",
				      p->counters.v[i].would_deny ? "would_deny:" : "",
				      p->counters.v[i].category, sum);
	}
	/* DNS queries the agent refused (dns.queries "listed"): never sent. */
	if (p->has_agent && p->ac[NG_AC_REFUSED])
		snprintf(out + n, n < len ? len - n : 0, "%sdns_query=%" PRIu64, n ? "," : "",
			 p->ac[NG_AC_REFUSED]);
	if (!out[0])
		snprintf(out, len, "-");
}

static void names(const struct ng_view_pod *p, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < p->names.n && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s=%u", n ? "," : "", p->names.v[i].name,
				      p->names.v[i].addresses);
	if (!out[0])
		snprintf(out, len, "-");
}

void ng_status_table(const struct ng_view *v, int64_t now_ms, const char *source, FILE *out)
{
	size_t w = strlen("POD"), enforced = 0, audited = 0, drifted = 0;

	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];
		size_t l = strlen(p->ns) + 1 + strlen(p->name);

		if (l > w)
			w = l;
		enforced += is_enforced(p);
		audited += is_enforced(p) && p->audit;
		drifted += is_enforced(p) && p->checked && !p->in_sync;
	}
	if (w > 60)
		w = 60;
	fprintf(out, "%zu pods, %zu enforced, %zu differing from their policy (%s)\n", v->pods.n, enforced,
		drifted, source);
	if (audited)
		fprintf(out,
			"%zu of them in AUDIT (enforce.auditNamespaces): refusals logged and let through, "
			"not enforcing\n",
			audited);
	fprintf(out, "%-*s  %-8s  %-12s  %-16s  %-36s  %-24s  %s\n", (int)w, "POD", "DECISION", "TABLES",
		"CHECK", "DENIED", "NAMES", "REASON");
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];
		char pod[600], t[32], c[48], d[256], n[512];
		const char *reason = p->checked && !p->in_sync && p->diff[0] ? p->diff
				     : p->read_error[0] && is_enforced(p)    ? p->read_error
									     : p->reason;

		snprintf(pod, sizeof(pod), "%s/%s", p->ns[0] ? p->ns : "-", p->name[0] ? p->name : p->key);
		tables(p, t, sizeof(t));
		check(p, now_ms, c, sizeof(c));
		denied(p, d, sizeof(d));
		names(p, n, sizeof(n));
		fprintf(out, "%-*s  %-8s  %-12s  %-16s  %-36s  %-24s  %s\n", (int)w, pod,
			is_enforced(p) && p->audit ? "AUDIT" : p->decision, t, c, d, n, reason);
	}
}
