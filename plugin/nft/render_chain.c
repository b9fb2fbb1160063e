/* Table, chain and object messages. See render_chain.h. */
#include "nft/render_chain.h"

#include <libnftnl/chain.h>
#include <libnftnl/object.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

int ng_render_table(struct ng_batch *b, uint16_t type, uint16_t flags, const char *comment, const char *what)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t)
		return -1;
	nftnl_table_set_str(t, NFTNL_TABLE_NAME, b->table);
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, b->family);
	if (comment && *comment) {
		struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 16);

		if (!ud || !nftnl_udata_put_strz(ud, NFTNL_UDATA_TABLE_COMMENT, comment)) {
			nftnl_udata_buf_free(ud);
			nftnl_table_free(t);
			return -1;
		}
		nftnl_table_set_data(t, NFTNL_TABLE_USERDATA, nftnl_udata_buf_data(ud),
				     nftnl_udata_buf_len(ud));
		nftnl_udata_buf_free(ud);
	}
	nlh = ng_batch_msg(b, type, flags, "table %s %s (%s)", ng_family_name(b->family), b->table, what);
	nftnl_table_nlmsg_build_payload(nlh, t);
	ng_batch_commit_msg(b);
	nftnl_table_free(t);
	return 0;
}

int ng_render_chain(struct ng_batch *b, const char *name, int hook, const char *device)
{
	return ng_render_base_chain(b, name, hook, device, 0, NF_DROP);
}

int ng_render_base_chain(struct ng_batch *b, const char *name, int hook, const char *device, int prio,
			 uint32_t policy)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh;

	if (!c)
		return -1;
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, b->table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, b->family);
	if (hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
		nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, policy);
		if (device)
			nftnl_chain_set_str(c, NFTNL_CHAIN_DEV, device);
	}
	nlh = ng_batch_msg(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE, "chain %s%s%s", name, device ? " on " : "",
			   device ? device : "");
	nftnl_chain_nlmsg_build_payload(nlh, c);
	ng_batch_commit_msg(b);
	nftnl_chain_free(c);
	return 0;
}

int ng_render_object(struct ng_batch *b, struct nftnl_obj *o, uint32_t type, const char *name,
		     const char *what)
{
	struct nlmsghdr *nlh;

	if (!o)
		return -1;
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, b->table);
	nftnl_obj_set_str(o, NFTNL_OBJ_NAME, name);
	nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, b->family);
	nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, type);
	nlh = ng_batch_msg(b, NFT_MSG_NEWOBJ, NLM_F_CREATE, "%s %s", what, name);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	ng_batch_commit_msg(b);
	nftnl_obj_free(o);
	return 0;
}

int ng_render_counter(struct ng_batch *b, const char *name)
{
	return ng_render_object(b, nftnl_obj_alloc(), NFT_OBJECT_COUNTER, name, "counter");
}
