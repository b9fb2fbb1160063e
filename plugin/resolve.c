#include "resolve.h"

#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnsparse.h"

#define ANSWER_MAX 65536

int ng_resolve_system(const char *name, struct ng_resolved_name *out, struct ng_err *err)
{
	static const uint16_t types[] = {ns_t_a, ns_t_aaaa};
	struct __res_state res;
	unsigned char *answer = malloc(ANSWER_MAX);
	int found = 0;

	if (!answer)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	memset(&res, 0, sizeof(res));
	if (res_ninit(&res) < 0) {
		free(answer);
		return ng_fail(err, NG_E_TRY_AGAIN, "cannot initialise the resolver (/etc/resolv.conf)");
	}
	/* Pod start waits on us: 2 s per try, 2 tries, per query type. */
	res.retrans = 2;
	res.retry = 2;
	for (size_t t = 0; t < 2; t++) {
		/* res_nquery, not res_nsearch: configured names are absolute and
		 * must not pick up the node's search domains. */
		int len = res_nquery(&res, name, ns_c_in, types[t], answer, ANSWER_MAX);
		int n;

		if (len < 0)
			continue; /* NXDOMAIN, NODATA or timeout for this type */
		n = ng_dns_parse_answers(answer, (size_t)len, types[t], out);
		if (n > 0)
			found += n;
	}
	res_nclose(&res);
	free(answer);
	if (found == 0)
		return ng_fail(err, NG_E_TRY_AGAIN, "DNS name %s did not resolve to any A or AAAA record",
			       name);
	return 0;
}

int ng_resolve_all(const ng_name_list *names, ng_resolver_fn fn, ng_resolved *out, struct ng_err *err)
{
	for (size_t i = 0; i < names->n; i++) {
		struct ng_resolved_name r = {0};

		snprintf(r.name, sizeof(r.name), "%s", names->v[i]);
		if (fn(names->v[i], &r, err) < 0) {
			ng_vec_free(&r.answers);
			return -1;
		}
		if (ng_vec_push(out, &r) < 0) {
			ng_vec_free(&r.answers);
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	return 0;
}
