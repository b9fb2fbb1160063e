#include "kernel/learnedset.h"

#include <libnftnl/set.h>

#include "kernel/ruleset.h"

struct each_ctx {
	const struct ng_set_spec *spec;
	ng_learned_fn fn;
	void *data;
};

/* One GETSETELEM reply. */
static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	struct each_ctx *c = data;
	struct nftnl_set *s = nftnl_set_alloc();
	struct nftnl_set_elems_iter *it;
	struct nftnl_set_elem *e;

	if (!s || nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
		nftnl_set_free(s);
		return 0;
	}
	it = nftnl_set_elems_iter_create(s);
	while (it && (e = nftnl_set_elems_iter_next(it))) {
		uint32_t klen = 0, elen = 0;
		const uint8_t *key = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &klen);
		const uint8_t *end = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY_END, &elen);
		struct ng_elem el;
		uint64_t left = 0, timeout = 0;

		if (!key || ng_set_key_decode(c->spec, key, klen, end, elen, &el) < 0)
			continue;
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_EXPIRATION))
			left = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_EXPIRATION);
		if (nftnl_set_elem_is_set(e, NFTNL_SET_ELEM_TIMEOUT))
			timeout = nftnl_set_elem_get_u64(e, NFTNL_SET_ELEM_TIMEOUT);
		el.timeout = (uint32_t)(timeout / 1000);
		c->fn(&el, left, c->data);
	}
	nftnl_set_elems_iter_destroy(it);
	nftnl_set_free(s);
	return 0;
}

int ng_learned_each(struct ng_nl *nl, uint8_t family, const char *table, const struct ng_set_spec *spec,
		    ng_learned_fn fn, void *data, struct ng_err *err)
{
	struct each_ctx c = {spec, fn, data};

	return ng_ruleset_dump_set(nl, family, table, spec->name, elems_cb, &c, err);
}
