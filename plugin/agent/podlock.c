/* The per-pod commit locks. See podlock.h. */
#include "agent/podlock.h"

#include <linux/netfilter.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/clock.h"
#include "kernel/learnedset.h"
#include "kernel/podtables.h"
#include "nft/render.h"

struct ng_podlock {
	char key[256];
	pthread_mutex_t mu;
	/* Raised by the learner before it tries the lock, so that the ops
	 * thread's unlock that follows a failed try always sees it and wakes
	 * the learner (raised after, a wake could be missed). */
	atomic_bool tried;
	unsigned refs;                   /* under the list's mutex */
	struct ng_tracker *tr, *tr_node; /* under mu; tr_node NULL: no node side */
	struct ng_taught *taught;        /* under mu: what each name entry taught */
	bool superseded;                 /* under mu: a re-plan wrote the pod a new record */
};

int ng_podlocks_init(struct ng_podlocks *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	r->freed_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return r->freed_fd < 0 ? -1 : 0;
}

void ng_podlocks_wake(struct ng_podlocks *r)
{
	uint64_t one = 1;

	if (write(r->freed_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN only (the counter full): it is readable already */
	}
}

void ng_podlocks_woken(struct ng_podlocks *r)
{
	uint64_t n;

	if (read(r->freed_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a wake already taken in this turn */
	}
}

void ng_podlocks_free(struct ng_podlocks *r)
{
	if (r->freed_fd >= 0)
		close(r->freed_fd);
	for (size_t i = 0; i < r->v.n; i++) {
		pthread_mutex_destroy(&r->v.v[i]->mu);
		free(r->v.v[i]);
	}
	ng_vec_free(&r->v);
	pthread_mutex_destroy(&r->mu);
}

struct ng_podlock *ng_podlock_get(struct ng_podlocks *r, const char *key)
{
	struct ng_podlock *l = NULL;

	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->v.n && !l; i++)
		if (!strcmp(r->v.v[i]->key, key))
			l = r->v.v[i];
	if (!l && (l = calloc(1, sizeof(*l)))) {
		snprintf(l->key, sizeof(l->key), "%s", key);
		pthread_mutex_init(&l->mu, NULL);
		/* the vector holds pointers: &l is the element to copy */
		if (ng_vec_push(&r->v, &l) < 0) { // NOLINT(bugprone-sizeof-expression)
			pthread_mutex_destroy(&l->mu);
			free(l);
			l = NULL;
		}
	}
	if (l)
		l->refs++;
	pthread_mutex_unlock(&r->mu);
	return l;
}

void ng_podlock_put(struct ng_podlocks *r, struct ng_podlock *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&r->mu);
	if (--l->refs == 0) {
		for (size_t i = 0; i < r->v.n; i++)
			if (r->v.v[i] == l) {
				r->v.v[i] = r->v.v[--r->v.n];
				break;
			}
		pthread_mutex_destroy(&l->mu);
		free(l);
	}
	pthread_mutex_unlock(&r->mu);
}

void ng_podlock_lock(struct ng_podlock *l)
{
	pthread_mutex_lock(&l->mu);
}

bool ng_podlock_trylock(struct ng_podlock *l)
{
	atomic_store(&l->tried, true);
	if (pthread_mutex_trylock(&l->mu) != 0)
		return false;
	atomic_store(&l->tried, false);
	return true;
}

void ng_podlock_unlock(struct ng_podlock *l)
{
	pthread_mutex_unlock(&l->mu);
}

void ng_podlock_unlock_ops(struct ng_podlocks *r, struct ng_podlock *l)
{
	pthread_mutex_unlock(&l->mu);
	if (atomic_exchange(&l->tried, false))
		ng_podlocks_wake(r);
}

void ng_podlock_attach(struct ng_podlock *l, struct ng_tracker *tr, struct ng_tracker *tr_node)
{
	l->tr = tr;
	l->tr_node = tr_node;
	l->superseded = false;
}

bool ng_podlock_superseded(const struct ng_podlock *l)
{
	return l->superseded;
}

void ng_podlock_attach_taught(struct ng_podlock *l, struct ng_taught *t)
{
	l->taught = t;
}

int ng_podlock_rows(struct ng_podlock *l, int64_t now_mono_ms, int64_t now_wall_ms, size_t max,
		    struct ng_view_pod *out)
{
	if (!l->tr || !l->taught)
		return 0;
	return ng_taught_rows(l->taught, l->tr, l->tr_node, now_mono_ms, now_wall_ms, max, out) < 0 ? -1 : 1;
}

/* Does a name entry of `pol` still cover element `e`? */
static bool covered(const struct ng_policy *pol, const struct ng_elem *e)
{
	for (size_t i = 0; i < pol->name_entries.n; i++) {
		const struct ng_name_entry *ne = &pol->name_entries.v[i];

		if (ne->proto == e->proto && e->p_lo >= ne->p_lo && e->p_hi <= ne->p_hi)
			return true;
	}
	return false;
}

/* One tracker's live elements (what each has left, the lease kept: a
 * rebuild is not a new lease) into `to`, those a name entry still covers. */
static int take(struct ng_tracker *tr, const struct ng_policy *pol, int64_t now_ms, ng_elem_vec to[2][2])
{
	ng_pending_vec live = {0};
	int n = 0;

	if (ng_tracker_relearn(tr, now_ms, &live) < 0) {
		ng_vec_free(&live);
		return -1;
	}
	for (size_t i = 0; i < live.n; i++) {
		const struct ng_pending *q = &live.v[i];

		if (!covered(pol, &q->e))
			continue;
		if (ng_vec_push(&to[q->ranged ? 1 : 0][NG_FAM_IDX(q->e.lo.fam)], &q->e) < 0) {
			ng_vec_free(&live);
			return -1;
		}
		n++;
	}
	ng_vec_free(&live);
	return n;
}

int ng_podlock_learned(struct ng_podlock *l, struct ng_policy *pol, int64_t now_ms)
{
	int n, m = 0;

	if (!l->tr || !pol->learn)
		return 0;
	n = take(l->tr, pol, now_ms, pol->learned);
	if (n >= 0 && l->tr_node)
		m = take(l->tr_node, pol, now_ms, pol->learned_node);
	return n < 0 || m < 0 ? -1 : n + m;
}

/* No learner holds the pod: what the kernel's learned sets hold now, on
 * either side, those a name entry of `pol` still covers. */
struct kctx {
	const struct ng_policy *pol;
	ng_elem_vec (*to)[2];
	bool ranged;
	int f, n;
	bool oom;
};

static void kernel_one(const struct ng_elem *el, uint64_t left_ms, void *data)
{
	struct kctx *c = data;
	struct ng_elem e = *el;

	if (!covered(c->pol, &e) || left_ms < 2000)
		return; /* gone in a moment anyway */
	e.timeout = (uint32_t)(left_ms / 1000);
	if (ng_vec_push(&c->to[c->ranged ? 1 : 0][c->f], &e) < 0)
		c->oom = true;
	else
		c->n++;
}

static int from_kernel(struct ng_nl *nl, uint8_t family, const char *table, struct ng_policy *pol,
		       ng_elem_vec to[2][2])
{
	struct ng_set_spec sets[NG_S_COUNT];
	struct kctx c = {.pol = pol, .to = to};
	struct ng_err err = {0};

	ng_render_set_specs(pol, sets);
	for (c.f = 0; c.f < 2; c.f++)
		for (int ranged = 0; ranged < 2; ranged++) {
			c.ranged = ranged != 0;
			/* a table without the set (not learning before): nothing */
			ng_learned_each(nl, family, table, &sets[ng_learned_set(c.f, c.ranged)], kernel_one,
					&c, &err);
		}
	return c.oom ? -1 : c.n;
}

static int learned_now(struct ng_podlock *l, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		       struct ng_policy *pol, const char *host_table)
{
	int n, m = 0;

	if (l->tr || !pol->learn)
		return ng_podlock_learned(l, pol, ng_mono_ms());
	n = from_kernel(pod_nl, NFPROTO_INET, NG_TABLE, pol, pol->learned);
	if (n >= 0 && pol->host && node_nl && host_table[0])
		m = from_kernel(node_nl, NFPROTO_NETDEV, host_table, pol, pol->learned_node);
	return n < 0 || m < 0 ? -1 : n + m;
}

bool ng_podlocks_served(struct ng_podlocks *r, const char *key)
{
	struct ng_podlock *l = ng_podlock_get(r, key);
	bool served;

	if (!l)
		return false;
	ng_podlock_lock(l);
	served = l->tr != NULL;
	ng_podlock_unlock_ops(r, l);
	ng_podlock_put(r, l);
	return served;
}

static bool covers(const struct ng_elem *e, const void *pol)
{
	return covered(pol, e);
}

int ng_podlock_copy(struct ng_podlock *l, const struct ng_policy *pol, struct ng_tracker *tr,
		    struct ng_tracker *tr_node)
{
	if (!l->tr)
		return 1;
	if (ng_tracker_copy(l->tr, tr, covers, pol) < 0 ||
	    (l->tr_node && ng_tracker_copy(l->tr_node, tr_node, covers, pol) < 0))
		return -1;
	return 0;
}

int ng_podlock_apply(struct ng_podlocks *r, const char *key, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		     struct ng_policy *pol, const char *host_table, const struct ng_podlock_hooks *hooks,
		     struct ng_podlock_stats *st, struct ng_err *err)
{
	struct ng_podlock *l = ng_podlock_get(r, key);
	int64_t t0 = ng_mono_us();
	int rc, n;

	memset(st, 0, sizeof(*st));
	if (!l)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	ng_podlock_lock(l);
	st->wait_us = ng_mono_us() - t0;
	if (hooks && hooks->still && !hooks->still(hooks->data)) {
		rc = 1;
	} else if ((n = learned_now(l, pod_nl, node_nl, pol, host_table)) < 0) {
		rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
	} else {
		st->learned = n;
		rc = ng_podtables_replace(pod_nl, node_nl, pol, host_table, err);
		if (rc == 0 && hooks && hooks->applied) {
			rc = hooks->applied(hooks->data, err);
			if (rc == 0)
				l->superseded = true;
			else if (rc == 1)
				rc = 2;
		}
	}
	st->apply_us = ng_mono_us() - t0 - st->wait_us;
	ng_podlock_unlock_ops(r, l);
	ng_podlock_put(r, l);
	return rc;
}
