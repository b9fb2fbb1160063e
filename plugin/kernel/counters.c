#include "kernel/counters.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/object.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdio.h>
#include <string.h>

struct read_ctx {
	ng_counter_vec *out;
	const char *table;
	bool oom;
};

static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct read_ctx *c = data;
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct ng_counter ctr = {0};

	if (!o)
		return -1;
	if (nftnl_obj_nlmsg_parse(nlh, o) == 0 &&
	    nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE) == NFT_OBJECT_COUNTER &&
	    !strcmp(nftnl_obj_get_str(o, NFTNL_OBJ_TABLE), c->table)) {
		snprintf(ctr.name, sizeof(ctr.name), "%s", nftnl_obj_get_str(o, NFTNL_OBJ_NAME));
		ctr.packets = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_PKTS);
		ctr.bytes = nftnl_obj_get_u64(o, NFTNL_OBJ_CTR_BYTES);
		if (ng_vec_push(c->out, &ctr) < 0)
			c->oom = true;
	}
	nftnl_obj_free(o);
	return 0;
}

int ng_counters_read(struct ng_nl *nl, const char *table, ng_counter_vec *out, struct ng_err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct read_ctx c = {.out = out, .table = table};
	size_t n0 = out->n;
	int rc = -1;

	/* libmnl leaves attribute padding as it finds it: never send stack bytes. */
	memset(buf, 0, sizeof(buf));
	/* Any family: the inet table's counters and the netdev guard's. */
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETOBJ, NFPROTO_UNSPEC, NLM_F_DUMP, 0);

	mnl_attr_put_strz(nlh, NFTA_OBJ_TABLE, table);
	mnl_attr_put_u32(nlh, NFTA_OBJ_TYPE, htonl(NFT_OBJECT_COUNTER));
	for (int attempt = 0; attempt < NG_NL_READ_TRIES; attempt++) {
		if (attempt > 0) { /* interrupted by a commit: again (nl.h) */
			out->n = n0;
			memset(err, 0, sizeof(*err));
			ng_nl_read_pause(attempt);
		}
		rc = ng_nl_dump(nl, nlh, obj_cb, &c, err);
		if (rc != -EINTR)
			break;
	}
	if (rc == 0 && c.oom)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	/* A dump of a missing table is not an error to the kernel: it is empty. */
	if (rc == 0 && out->n == 0)
		return -ENOENT;
	return rc;
}

const struct ng_counter *ng_counter_find(const ng_counter_vec *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].name, name))
			return &v->v[i];
	return NULL;
}
