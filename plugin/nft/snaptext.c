#include "nft/snaptext.h"

#include <libnftnl/udata.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ng_snap_hex(char *out, size_t outlen, const void *data, uint32_t len)
{
	const uint8_t *p = data;
	size_t o = 0;

	out[0] = '\0';
	for (uint32_t i = 0; p && i < len && o + 3 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", p[i]);
}

static int comment_cb(const struct nftnl_udata *attr, void *data)
{
	const struct nftnl_udata **found = data;

	/* Type 0 is the comment for tables, rules and set elements alike. */
	if (nftnl_udata_type(attr) == 0 && nftnl_udata_len(attr) > 0)
		*found = attr;
	return 0;
}

void ng_snap_comment(const void *data, uint32_t len, char *out, size_t outlen)
{
	const struct nftnl_udata *c = NULL;

	out[0] = '\0';
	if (!data || nftnl_udata_parse(data, len, comment_cb, &c) < 0 || !c)
		return;
	/* nft stores the comment with its terminating NUL; print up to it. */
	snprintf(out, outlen, "%.*s", (int)strnlen(nftnl_udata_get(c), nftnl_udata_len(c)),
		 (const char *)nftnl_udata_get(c));
}

void ng_snap_problem(struct ng_snapshot *s, const char *msg)
{
	char *copy = strdup(msg);

	if (!copy || ng_vec_push(&s->problems, &copy) < 0) {
		free(copy);
		s->oom = true;
	}
}
