#include "nft/snapdiff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/snapelem.h"

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

/* The differences found so far: a count, the first (for msg), and the
 * next dozen (for details: msg already says the first, so details starts
 * with the second). */
#define MAX_DETAILS 12
struct diffs {
	char first[sizeof(((struct ng_err *)0)->msg)];
	char details[sizeof(((struct ng_err *)0)->details)];
	size_t n;
};

static void note(struct diffs *d, const char *one)
{
	if (d->n++ == 0)
		snprintf(d->first, sizeof(d->first), "%.400s", one);
	else if (d->n <= MAX_DETAILS + 1)
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
		char one[400], text[400];

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
		/* Set elements in nft's syntax (10.30.1.0/24 . tcp . 443). */
		if (cmp < 0) {
			snprintf(one, sizeof(one), "missing: %.380s",
				 ng_elem_line_text(want, have, w, text, sizeof(text)) ? text : w);
			i++;
		} else {
			snprintf(one, sizeof(one), "unexpected: %.380s",
				 ng_elem_line_text(want, have, h, text, sizeof(text)) ? text : h);
			j++;
		}
		note(&d, one);
	}
	for (size_t k = 0; k < have->problems.n; k++)
		note(&d, have->problems.v[k]);
	if (d.n == 0)
		return 0;
	ng_fail(err, NG_E_CHECK, "ruleset differs from the policy (%zu difference%s)%s %s", d.n,
		d.n == 1 ? "" : "s", d.n == 1 ? ":" : "; first:", d.first);
	if (d.n > MAX_DETAILS + 1)
		snprintf(d.details + strlen(d.details), sizeof(d.details) - strlen(d.details),
			 "... and %zu more\n", d.n - MAX_DETAILS - 1);
	ng_err_details(err, "%s", d.details);
	return -1;
}
