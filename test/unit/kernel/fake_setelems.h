/* A transport over fake_kernel.h that also writes down what each batch
 * carried to the learned sets: per set-element message its type, family,
 * table, set and elements (decoded with the set's own layout). The fake
 * kernel answers as the scenario says; this only looks. For the tests of
 * the agent's commit (kernel/learncommit.h) and of its answer path. */
#ifndef NG_TEST_FAKE_SETELEMS_H
#define NG_TEST_FAKE_SETELEMS_H

#include "fake_kernel.h"

#include <libnftnl/set.h>

#include "nft/render_objs.h"

#define SE_MAX_MSGS  64
#define SE_MAX_ELEMS 16

struct se_msg {
	int batch;     /* 0-based, per transport */
	uint16_t type; /* NFT_MSG_NEWSETELEM / NFT_MSG_DELSETELEM */
	uint8_t family;
	char table[256], set[64];
	int n;
	struct ng_elem el[SE_MAX_ELEMS];
	uint64_t timeout_ms[SE_MAX_ELEMS]; /* 0: none */
};

struct se_log {
	struct fake *f;                 /* the kernel's answers */
	const struct ng_set_spec *sets; /* NG_S_COUNT, to decode keys */
	struct se_msg m[SE_MAX_MSGS];
	int n, batches;
};

__attribute__((unused)) static const struct ng_set_spec *se_spec(const struct se_log *l, const char *name)
{
	for (int i = 0; i < NG_S_COUNT; i++)
		if (l->sets[i].name && !strcmp(l->sets[i].name, name))
			return &l->sets[i];
	return NULL;
}

__attribute__((unused)) static void se_note(struct se_log *l, const struct nlmsghdr *nlh)
{
	uint16_t type = nlh->nlmsg_type & 0xff;
	struct nftnl_set *s;
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;
	struct se_msg *m;

	if ((nlh->nlmsg_type >> 8) != NFNL_SUBSYS_NFTABLES ||
	    (type != NFT_MSG_NEWSETELEM && type != NFT_MSG_DELSETELEM))
		return;
	assert_true(l->n < SE_MAX_MSGS);
	m = &l->m[l->n++];
	memset(m, 0, sizeof(*m));
	m->batch = l->batches;
	m->type = type;
	s = nftnl_set_alloc();
	assert_non_null(s);
	assert_int_equal(nftnl_set_elems_nlmsg_parse(nlh, s), 0);
	m->family = (uint8_t)nftnl_set_get_u32(s, NFTNL_SET_FAMILY);
	snprintf(m->table, sizeof(m->table), "%s", nftnl_set_get_str(s, NFTNL_SET_TABLE));
	snprintf(m->set, sizeof(m->set), "%s", nftnl_set_get_str(s, NFTNL_SET_NAME));
	it = nftnl_set_elems_iter_create(s);
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		uint32_t klen = 0, elen = 0;
		const uint8_t *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);
		const uint8_t *end = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &elen);
		const struct ng_set_spec *spec = se_spec(l, m->set);

		assert_true(m->n < SE_MAX_ELEMS);
		assert_non_null(spec);
		assert_int_equal(ng_set_key_decode(spec, key, klen, end, elen, &m->el[m->n]), 0);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
			m->timeout_ms[m->n] = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
		m->n++;
	}
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
}

__attribute__((unused)) static ssize_t se_sendmsg(void *ctx, const struct msghdr *msg)
{
	struct se_log *l = ctx;
	const struct nlmsghdr *first = msg->msg_iov[0].iov_base;

	if (first->nlmsg_type == NFNL_MSG_BATCH_BEGIN) {
		for (size_t i = 0; i < msg->msg_iovlen; i++) {
			const struct nlmsghdr *nlh = msg->msg_iov[i].iov_base;
			int len = (int)msg->msg_iov[i].iov_len;

			for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len))
				se_note(l, nlh);
		}
		l->batches++;
	}
	return fake_sendmsg(l->f, msg);
}

__attribute__((unused)) static ssize_t se_recv(void *ctx, void *buf, size_t len, int timeout_ms,
					       uint32_t *sender)
{
	return fake_recv(((struct se_log *)ctx)->f, buf, len, timeout_ms, sender);
}

__attribute__((unused)) static const struct ng_nl_ops se_ops = {se_sendmsg, se_recv};

/* A transport `nl` over a new fake kernel, logged into *l. */
__attribute__((unused)) static void se_open(struct se_log *l, const struct ng_set_spec *sets,
					    struct ng_nl *nl)
{
	memset(l, 0, sizeof(*l));
	l->f = fake_new();
	l->sets = sets;
	ng_nl_init_ops(nl, &se_ops, l);
}

__attribute__((unused)) static void se_close(struct se_log *l)
{
	free(l->f);
	l->f = NULL;
}

/* The element of message m that is ip (port p_lo), or -1. */
__attribute__((unused)) static int se_find(const struct se_msg *m, const char *ip, uint16_t p_lo)
{
	struct ng_ip want;

	assert_int_equal(ng_ip_parse(ip, &want), 0);
	for (int i = 0; i < m->n; i++)
		if (ng_ip_eq(&m->el[i].lo, &want) && m->el[i].p_lo == p_lo)
			return i;
	return -1;
}

#endif
