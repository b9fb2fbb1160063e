/* The pure half of a grant change. See grantplan.h. */
#include "agent/grantplan.h"

#include <stdio.h>
#include <string.h>

bool ng_grantplan_same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int ng_grantplan_removed(const ng_dest_vec *old, const ng_dest_vec *now, ng_dest_vec *out)
{
	for (size_t i = 0; i < old->n; i++) {
		bool kept = false;

		for (size_t j = 0; j < now->n && !kept; j++)
			kept = ng_dest_within(&old->v[i], &now->v[j]);
		if (!kept && ng_vec_push(out, &old->v[i]) < 0)
			return -1;
	}
	return 0;
}

void ng_grantplan_list(const ng_dest_vec *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < v->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", v->v[i].text);
	if (!v->n)
		snprintf(buf, len, "none");
}
