#include "state/invstats.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const verbs[] = {"ADD", "DEL", "CHECK", "STATUS", "GC", "VERSION", NULL};

static int known_verb(const char *v, size_t n)
{
	for (int i = 0; verbs[i]; i++)
		if (strlen(verbs[i]) == n && !memcmp(verbs[i], v, n))
			return 1;
	return 0;
}

/* A decision is lower-case words: the decision log's vocabulary. */
static int decision_char(char c)
{
	return (c >= 'a' && c <= 'z') || c == '_';
}

int ng_inv_format(char *buf, size_t len, const char *verb, const char *decision, uint64_t us)
{
	char d[24];
	size_t n = strlen(decision);
	int w;

	if (!known_verb(verb, strlen(verb)) || n == 0 || n >= sizeof(d))
		return -1;
	for (size_t i = 0; i < n; i++) {
		d[i] = decision[i] == ' ' ? '_' : decision[i];
		if (!decision_char(d[i]))
			return -1;
	}
	d[n] = '\0';
	w = snprintf(buf, len, "%s %s %llu\n", verb, d, (unsigned long long)us);
	return w > 0 && (size_t)w < len ? w : -1;
}

int ng_inv_parse(const char *line, size_t n, struct ng_inv *out)
{
	const char *sp1, *sp2, *end = line + n;
	uint64_t us = 0;
	size_t dn;

	if (n && line[n - 1] == '\n')
		end--;
	sp1 = memchr(line, ' ', (size_t)(end - line));
	if (!sp1 || !known_verb(line, (size_t)(sp1 - line)))
		return -1;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	dn = sp2 ? (size_t)(sp2 - sp1 - 1) : 0;
	if (!sp2 || dn == 0 || dn >= sizeof(out->decision) || sp2 + 1 == end || end - sp2 - 1 > 15)
		return -1;
	for (const char *p = sp1 + 1; p < sp2; p++)
		if (!decision_char(*p))
			return -1;
	for (const char *p = sp2 + 1; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		us = us * 10 + (uint64_t)(*p - '0');
	}
	memcpy(out->verb, line, (size_t)(sp1 - line));
	out->verb[sp1 - line] = '\0';
	memcpy(out->decision, sp1 + 1, dn);
	out->decision[dn] = '\0';
	out->us = us;
	return 0;
}

void ng_inv_append(const char *state_dir, const char *line, size_t n)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, state_dir);
	/* ENOENT: no stateDir, no agent to read it. O_NOFOLLOW: a planted
	 * symlink must not redirect a root-owned append. */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, n) < 0) {
		/* Metrics only: the decision log has the invocation. */
	}
	close(fd);
}
