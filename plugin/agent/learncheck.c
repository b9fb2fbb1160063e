/* A learning pod's learned sets against the learner's trackers. See
 * learncheck.h. */
#include "agent/learncheck.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <stdbool.h>
#include <stdio.h>

#include "agent/tracker.h"
#include "base/addr.h"
#include "base/clock.h"
#include "kernel/learnedset.h"
#include "nft/render.h"
#include "nft/render_sets.h"

struct kernel_ctx {
	struct ng_tracker *kt;
	bool ranged;
	int64_t now;
};

/* One element as the kernel holds it, at the kernel's own expiry (past the
 * tracker's bound: a table holding more than the learner ever tracks has
 * elements of another hand, and whatever is not taken reads as missing). */
static void kernel_one(const struct ng_elem *el, uint64_t left_ms, void *data)
{
	struct kernel_ctx *c = data;

	ng_tracker_learned(c->kt, el, c->ranged, c->now + (int64_t)left_ms);
}

struct side {
	const char *what;      /* "pod" or "node" */
	struct ng_nl *nl;      /* NULL: not read */
	uint8_t family;        /* of the table */
	const char *table;     /* its name */
	struct ng_tracker *tr; /* the learner's (a copy) */
};

/* One table's learned sets against one tracker: adds to out. */
static int check_table(const struct side *sd, const struct ng_set_spec *sets, int64_t now,
		       struct ng_learncheck *out, struct ng_err *err)
{
	struct ng_tracker kt = {0};
	struct ng_elem first;
	bool ranged = false;
	uint32_t n;

	for (int f = 0; f < 2; f++)
		for (int r = 0; r < 2; r++) {
			struct kernel_ctx c = {&kt, r != 0, now};
			int rc = ng_learned_each(sd->nl, sd->family, sd->table,
						 &sets[ng_learned_set(f, r != 0)], kernel_one, &c, err);

			if (rc < 0 && rc != -ENOENT) { /* gone: CHECK says so, not this */
				ng_tracker_free(&kt);
				return -1;
			}
		}
	n = ng_tracker_missing(sd->tr, &kt, now, NG_LEARNCHECK_MARGIN_MS, &first, &ranged);
	ng_tracker_free(&kt);
	if (n && !out->missing) {
		char ip[NG_IP_STRLEN], ports[16];

		ng_ip_format(&first.lo, ip, sizeof(ip));
		if (first.p_lo == first.p_hi)
			snprintf(ports, sizeof(ports), "%u", first.p_lo);
		else
			snprintf(ports, sizeof(ports), "%u-%u", first.p_lo, first.p_hi);
		snprintf(out->first, sizeof(out->first), "%s side: %s %s . %s . %s", sd->what,
			 sets[ng_learned_set(NG_FAM_IDX(first.lo.fam), ranged)].name, ip,
			 first.proto == 17 ? "udp" : "tcp", ports);
	}
	out->missing += n;
	return 0;
}

/* One look: the trackers copied under the lock, the kernel read with it
 * held (`locked`) or after it was let go. */
static int look(struct ng_podlocks *locks, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		const struct ng_record *d, const struct ng_policy *pol, bool locked,
		struct ng_learncheck *out, struct ng_err *err)
{
	struct ng_podlock *l = ng_podlock_get(locks, d->key);
	struct ng_tracker tr = {0}, tr_node = {0};
	struct ng_set_spec sets[NG_S_COUNT];
	int rc;

	*out = (struct ng_learncheck){0};
	if (!l)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	ng_podlock_lock(l);
	rc = ng_podlock_copy(l, pol, &tr, &tr_node);
	if (!locked || rc != 0)
		ng_podlock_unlock_ops(locks, l);
	if (rc < 0)
		ng_fail(err, NG_E_INTERNAL, "out of memory");
	if (rc == 0) {
		struct side sd = {"pod", pod_nl, NFPROTO_INET, NG_TABLE, &tr};
		int64_t now = ng_mono_ms();

		ng_render_set_specs(pol, sets);
		rc = check_table(&sd, sets, now, out, err);
		for (size_t i = 0; rc == 0 && node_nl && i < d->tables.n; i++) {
			if (!d->tables.v[i].in_node)
				continue;
			sd = (struct side){"node", node_nl, d->tables.v[i].family, d->tables.v[i].name,
					   &tr_node};
			rc = check_table(&sd, sets, now, out, err);
		}
		if (locked)
			ng_podlock_unlock_ops(locks, l);
	}
	ng_podlock_put(locks, l);
	ng_tracker_free(&tr);
	ng_tracker_free(&tr_node);
	return rc < 0 ? -1 : 0;
}

int ng_learncheck_run(struct ng_podlocks *locks, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		      const struct ng_record *d, const struct ng_policy *pol, struct ng_learncheck *out,
		      struct ng_err *err)
{
	if (!pol->learn) {
		*out = (struct ng_learncheck){0};
		return 0;
	}
	if (look(locks, pod_nl, node_nl, d, pol, false, out, err) < 0)
		return -1;
	return out->missing ? look(locks, pod_nl, node_nl, d, pol, true, out, err) : 0;
}
