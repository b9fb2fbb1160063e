#include "node/statustable.h"

#include <inttypes.h>
#include <stdlib.h>
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

/* The policy generation the pod runs ("-" unknown or not enforced),
 * "(behind)" while it is not the node's current one, "(kept)" when it
 * keeps a mode the current entry would not give it. */
static void generation(const struct ng_view_pod *p, char *out, size_t len)
{
	if (!is_enforced(p) || !p->generation)
		snprintf(out, len, "-%s", is_enforced(p) && p->behind ? "(behind)" : "");
	else
		snprintf(out, len, "%" PRIu64 "%s%s", p->generation, p->behind ? "(behind)" : "",
			 p->kept ? "(kept)" : "");
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

/* egress=3,raw=0: summed over tables, categories in first-seen order. */
static void denied(const struct ng_view_pod *p, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < p->counters.n; i++) {
		uint64_t sum = 0;
		bool first = true;

		for (size_t k = 0; k < i && first; k++)
			first = strcmp(p->counters.v[k].category, p->counters.v[i].category) != 0;
		if (!first)
			continue;
		for (size_t k = i; k < p->counters.n; k++)
			if (!strcmp(p->counters.v[k].category, p->counters.v[i].category))
				sum += p->counters.v[k].packets;
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s=%" PRIu64, n ? "," : "",
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

void ng_status_sum(const struct ng_view *v, struct ng_status_sum *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < v->pods.n; i++) {
		const struct ng_view_pod *p = &v->pods.v[i];

		s->pods++;
		if (!strcmp(p->decision, "skipped")) {
			s->skipped++;
			continue;
		}
		if (!strcmp(p->decision, "refused")) {
			s->refused++;
			continue;
		}
		if (!is_enforced(p)) {
			s->other++;
			continue;
		}
		s->enforced++;
		s->audited += p->audit;
		if ((p->checked && !p->in_sync) || (p->read_ok && !p->pod_present))
			s->differs++;
		else if (p->checked)
			s->in_sync++;
		else if (p->read_error[0])
			s->cannot_check++;
		else
			s->not_yet++;
	}
}

int ng_status_exit(const struct ng_status_sum *s)
{
	if (s->differs)
		return 3;
	return s->cannot_check || s->not_yet ? 4 : 0;
}

static void header(const struct ng_view *v, int64_t now_ms, const struct ng_status_source *src, FILE *out)
{
	struct ng_status_sum s;

	if (src->from_agent) {
		bool ready = v->ready.binary && v->ready.conflist && v->ready.serving &&
			     (!v->ready.has_policy || v->ready.policy);
		const char *why = !v->ready.binary     ? v->ready.binary_msg
				  : !v->ready.conflist ? v->ready.conflist_msg
				  : !v->ready.serving  ? v->ready.serving_msg
						       : v->ready.policy_msg;

		fprintf(out,
			"agent: serving, version %s%s%s%s, %s%s%s, generation %" PRIu64 ", view %" PRId64
			"s old\n",
			v->agent_version[0] ? v->agent_version : "?",
			strcmp(v->agent_version, src->version) ? " (this binary " : "",
			strcmp(v->agent_version, src->version) ? src->version : "",
			strcmp(v->agent_version, src->version) ? ")" : "", ready ? "ready" : "NOT ready",
			ready ? "" : ": ", ready ? "" : why, v->scans,
			(now_ms - v->now_ms > 0 ? now_ms - v->now_ms : 0) / 1000);
	} else {
		fprintf(out, "agent: %s: read from the kernel now (status %s)\n",
			src->agent_running ? "running, but its view is stale or unreadable" : "not running",
			src->version);
	}
	if (src->from_agent && v->ready.has_policy)
		fprintf(out,
			"policy: generation %" PRIu64 "%s%s, %" PRIu64 " of %" PRIu64
			" enforced pod(s) behind%s%s\n",
			v->policy.gen, v->policy.file[0] ? " from " : "", v->policy.file, v->policy.behind,
			v->policy.pods, v->ready.policy ? "" : ": ",
			v->ready.policy ? "" : v->ready.policy_msg);
	ng_status_sum(v, &s);
	fprintf(out,
		"pods: %zu: %zu enforced (%zu in-sync, %zu differ, %zu cannot-check, %zu not-yet), %zu "
		"skipped, "
		"%zu refused",
		s.pods, s.enforced, s.in_sync, s.differs, s.cannot_check, s.not_yet, s.skipped, s.refused);
	if (s.other)
		fprintf(out, ", %zu other", s.other);
	fputc('\n', out);
	if (s.audited)
		fprintf(out,
			"%zu of them in AUDIT (enforce.auditNamespaces): refusals logged and let through, "
			"not enforcing\n",
			s.audited);
}

enum { C_POD, C_DECISION, C_GEN, C_TABLES, C_CHECK, C_DENIED, C_NAMES, C_REASON, C_COUNT };

struct row {
	char cell[C_COUNT][600];
};

static void row_of(const struct ng_view_pod *p, int64_t now_ms, struct row *r)
{
	const char *reason = p->checked && !p->in_sync && p->diff[0] ? p->diff
			     : p->read_error[0] && is_enforced(p)    ? p->read_error
								     : p->reason;

	snprintf(r->cell[C_POD], sizeof(r->cell[C_POD]), "%.280s/%.280s", p->ns[0] ? p->ns : "-",
		 p->name[0] ? p->name : p->key);
	snprintf(r->cell[C_DECISION], sizeof(r->cell[C_DECISION]), "%s",
		 is_enforced(p) && p->audit ? "AUDIT" : p->decision);
	generation(p, r->cell[C_GEN], sizeof(r->cell[C_GEN]));
	tables(p, r->cell[C_TABLES], sizeof(r->cell[C_TABLES]));
	check(p, now_ms, r->cell[C_CHECK], sizeof(r->cell[C_CHECK]));
	denied(p, r->cell[C_DENIED], sizeof(r->cell[C_DENIED]));
	names(p, r->cell[C_NAMES], sizeof(r->cell[C_NAMES]));
	snprintf(r->cell[C_REASON], sizeof(r->cell[C_REASON]), "%s", reason);
}

static void print_row(const struct row *r, const size_t *w, FILE *out)
{
	for (int c = 0; c < C_REASON; c++)
		fprintf(out, "%-*s  ", (int)w[c], r->cell[c]);
	fprintf(out, "%s\n", r->cell[C_REASON]);
}

void ng_status_table(const struct ng_view *v, int64_t now_ms, const struct ng_status_source *src, FILE *out)
{
	static const char *const titles[C_COUNT] = {"POD",   "DECISION", "GEN",   "TABLES",
						    "CHECK", "DENIED",   "NAMES", "REASON"};
	struct row head;
	struct row *rows = calloc(v->pods.n ? v->pods.n : 1, sizeof(*rows));
	size_t w[C_COUNT] = {0};

	header(v, now_ms, src, out);
	if (!rows)
		return;
	/* Every column as wide as its widest cell: the table lines up
	 * whatever the names, counters or ages hold. */
	for (int c = 0; c < C_COUNT; c++) {
		snprintf(head.cell[c], sizeof(head.cell[c]), "%s", titles[c]);
		w[c] = strlen(titles[c]);
	}
	for (size_t i = 0; i < v->pods.n; i++) {
		row_of(&v->pods.v[i], now_ms, &rows[i]);
		for (int c = 0; c < C_COUNT; c++)
			if (strlen(rows[i].cell[c]) > w[c])
				w[c] = strlen(rows[i].cell[c]);
	}
	print_row(&head, w, out);
	for (size_t i = 0; i < v->pods.n; i++)
		print_row(&rows[i], w, out);
	free(rows);
}
