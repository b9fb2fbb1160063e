#include "node/proccaps.h"

#include <stdlib.h>
#include <string.h>

/* The value after "Key:\t" on its own line, or NULL. */
static const char *field(const char *text, const char *key)
{
	size_t k = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ':')
			return l + k + 1 + strspn(l + k + 1, " \t");
	return NULL;
}

static int hex64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	*out = strtoull(s, &end, 16);
	return end != s && (*end == '\n' || *end == '\0') ? 0 : -1;
}

int ng_proc_parse_status(const char *status, struct ng_proc *p)
{
	const char *name = field(status, "Name"), *nnp = field(status, "NoNewPrivs");
	size_t n;

	if (!name || !nnp || (*nnp != '0' && *nnp != '1') || hex64(field(status, "CapPrm"), &p->prm) < 0 ||
	    hex64(field(status, "CapBnd"), &p->bnd) < 0)
		return -1;
	n = strcspn(name, "\n");
	if (n >= sizeof(p->name))
		n = sizeof(p->name) - 1;
	memcpy(p->name, name, n);
	p->name[n] = '\0';
	p->nnp = *nnp == '1';
	return 0;
}

int ng_proc_parse_start(const char *stat, unsigned long long *start)
{
	/* "pid (comm) state ppid ...": the comm ends at the LAST ')'. */
	const char *s = strrchr(stat, ')');
	int field_no = 2; /* the comm; fields are separated by single spaces */

	if (!s)
		return -1;
	for (s++; *s && field_no < 22; s++)
		if (*s == ' ')
			field_no++;
	if (field_no != 22 || *s < '0' || *s > '9')
		return -1;
	*start = strtoull(s, NULL, 10);
	return 0;
}

enum ng_cap_reach ng_proc_cap_reach(const struct ng_proc *p, int cap)
{
	uint64_t bit = UINT64_C(1) << cap;

	if (p->prm & bit)
		return NG_CAP_NOW;
	if ((p->bnd & bit) && !p->nnp)
		return NG_CAP_BY_EXEC;
	return NG_CAP_NO;
}

void ng_proc_merge_thread(struct ng_proc *p, const struct ng_proc *t)
{
	/* The bits an exec could grant: bounding set, no_new_privs off. */
	uint64_t by_exec = (p->nnp ? 0 : p->bnd) | (t->nnp ? 0 : t->bnd);

	p->prm |= t->prm;
	if (by_exec) {
		p->bnd = by_exec;
		p->nnp = false;
	} else {
		p->bnd |= t->bnd;
		p->nnp = true;
	}
}

long ng_proc_infra(const struct ng_proc *v, size_t n, int sandbox_pid)
{
	for (size_t i = 0; sandbox_pid > 0 && i < n; i++)
		if (v[i].pid == sandbox_pid)
			return (long)i;
	return -1;
}
