#include "kernel/resolve.h"
#include "base/clock.h"

#include <arpa/nameser.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/dnsparse.h"

#define ANSWER_MAX 65536

static long now_ms(void)
{
	return (long)ng_mono_ms();
}

/* Worst-case seconds of one glibc res_nquery with no answer: per try, each
 * server waits retrans << i seconds (i its index), divided by the number of
 * servers for i > 0, at least 1 s (glibc's send_dg; measured here: 1, 2 and
 * 3 servers at retrans 2, retry 2 take 4, 8 and 10 s). */
static long query_cost_ms(int retrans, int retry, int nscount)
{
	long per_try = 0;

	for (int i = 0; i < nscount; i++) {
		long s = (long)retrans << i;

		if (i > 0)
			s /= nscount;
		per_try += s > 0 ? s : 1;
	}
	return per_try * retry * 1000;
}

/* The most patient timeouts that fit what is left of the budget: 2 s and 2
 * tries normally (a busy node resolver gets time to answer), down to one
 * 1 s try, so a query overruns the budget by little more than one try. */
static void fit_timeouts(struct __res_state *res, long left_ms)
{
	static const int steps[][2] = {{2, 2}, {1, 2}, {1, 1}};
	int nscount = res->nscount > 0 ? res->nscount : 1;
	size_t i = 0;

	while (i + 1 < sizeof(steps) / sizeof(steps[0]) &&
	       query_cost_ms(steps[i][0], steps[i][1], nscount) > left_ms)
		i++;
	res->retrans = steps[i][0];
	res->retry = steps[i][1];
}

int ng_resolve_system(const char *name, long budget_ms, struct ng_resolved_name *out, struct ng_err *err)
{
	static const uint16_t types[] = {ns_t_a, ns_t_aaaa};
	struct __res_state res;
	unsigned char *answer = malloc(ANSWER_MAX);
	long deadline = now_ms() + budget_ms;
	int found = 0;

	if (!answer)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	memset(&res, 0, sizeof(res));
	if (res_ninit(&res) < 0) {
		free(answer);
		return ng_fail(err, NG_E_TRY_AGAIN, "cannot initialise the resolver (/etc/resolv.conf)");
	}
	for (size_t t = 0; t < 2; t++) {
		long left = deadline - now_ms();
		int len, n;

		if (t > 0 && left <= 0)
			break; /* the budget went on the A query */
		fit_timeouts(&res, left);
		/* res_nquery, not res_nsearch: configured names are absolute and
		 * must not pick up the node's search domains. */
		len = res_nquery(&res, name, ns_c_in, types[t], answer, ANSWER_MAX);

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

int ng_resolve_all(const ng_name_list *names, ng_resolver_fn fn, long budget_ms, ng_resolved *out,
		   struct ng_err *err)
{
	long deadline = now_ms() + budget_ms;

	for (size_t i = 0; i < names->n; i++) {
		struct ng_resolved_name r = {0};
		long left = deadline - now_ms();

		if (left <= 0)
			return ng_fail(err, NG_E_TRY_AGAIN,
				       "DNS resolution ran out of its %ld ms budget at %s (%zu of %zu names "
				       "resolved)",
				       budget_ms, names->v[i], i, names->n);
		snprintf(r.name, sizeof(r.name), "%s", names->v[i]);
		if (fn(names->v[i], left, &r, err) < 0) {
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
