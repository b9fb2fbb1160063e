/* Live policy, the pods' side. See livepods.h. */
#include "agent/livepods.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/livepolicy.h"
#include "agent/replan.h"
#include "base/clock.h"
#include "state/liveplan.h"
#include "state/record.h"

static void failed(struct ng_opod *p, const struct ng_policygen *cur, struct ng_livepods_stats *st,
		   const char *why)
{
	st->replan_errors++;
	p->live_seen = cur->gen;
	p->live_retry_ms = ng_mono_ms() + NG_LIVE_RETRY_MS;
	ng_opod_log("error", "policy_replan_failed", p,
		    "not re-planned to generation %llu, it keeps generation %llu (tried again in %d s): %s",
		    (unsigned long long)cur->gen, (unsigned long long)p->live_gen, NG_LIVE_RETRY_MS / 1000,
		    why);
}

/* The log of one re-plan: what it changed for the pod. */
static void said(struct ng_opod *p, const struct ng_policygen *cur, uint64_t was,
		 const struct ng_liveplan *lp, bool was_audit, const struct ng_replan_result *res)
{
	for (size_t i = 0; i < lp->dropped.n; i++)
		ng_opod_log("warning", "grant_dropped", p,
			    "generation %llu no longer admits the pod's grant %s: dropped from the pod "
			    "(narrower, never wider)",
			    (unsigned long long)cur->gen, lp->dropped.v[i]);
	if (res->cut_error[0])
		ng_opod_log("error", "policy_cut_failed", p, "live flows the new policy no longer admits: %s",
			    res->cut_error);
	ng_opod_log("info", "policy_replanned", p,
		    "generation %llu (was %llu), mode %s%s%s, %zu grant(s) dropped; both sides in one "
		    "transaction per namespace with %d learned element(s) (%lld us; %lld us waiting for the "
		    "pod's commit lock); %u live flow(s) the new policy does not admit cut",
		    (unsigned long long)cur->gen, (unsigned long long)was,
		    was_audit == p->d.audit ? ""
		    : was_audit             ? "audit -> "
					    : "enforce -> ",
		    p->d.audit ? "audit" : "enforce",
		    lp->kept ? " (kept: the entry would select it less)" : "", lp->dropped.n, res->st.learned,
		    (long long)res->st.apply_us, (long long)res->st.wait_us, res->cut);
}

static void replan(struct ng_opod *p, const struct ng_policygen *cur, struct ng_record *r,
		   const struct ng_opod_env *env, struct ng_livepods_stats *st)
{
	struct ng_replan_result res;
	struct ng_liveplan lp;
	struct ng_err err = {0};
	uint64_t was = p->live_gen;
	bool was_audit = p->d.audit;
	int rc = ng_liveplan_build(r, cur->entry, cur->gen, &lp, &err);

	if (rc == 0)
		rc = ng_replan(p, env, &lp.rec, &res, &err);
	if (rc == 0) {
		st->replans++;
		st->dropped += lp.dropped.n;
		st->cut += res.cut;
		p->live_gen = cur->gen;
		said(p, cur, was, &lp, was_audit, &res);
	} else if (rc == 1) {
		/* its record went (DEL) or is another (a retried ADD): that one
		 * is looked at when the watch has read it */
		ng_opod_log("info", "policy_replan_skipped", p, "its record went or changed meanwhile");
	} else {
		failed(p, cur, st, err.msg);
	}
	ng_liveplan_free(&lp);
}

/* A pod not known to run `cur`: its record, from disk, decides. */
static void visit(struct ng_opod *p, const struct ng_policygen *cur, const struct ng_opod_env *env,
		  struct ng_livepods_stats *st)
{
	char path[4600];
	struct ng_record r;
	struct ng_err err = {0};
	struct stat sb;

	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", env->state_dir, p->d.key);
	if (ng_record_read(path, &r, &err) < 0) {
		if (ng_opod_recorded(p, env))
			failed(p, cur, st, err.msg);
		return; /* gone (DEL): the watch drops it */
	}
	/* Rewritten since the watch read it (a retried ADD): that one next. */
	if (stat(path, &sb) < 0 || (uint64_t)sb.st_ino != p->file_ino ||
	    strcmp(r.decision, "enforced") != 0) {
		ng_record_free(&r);
		return;
	}
	p->live_other = !json_equal(json_object_get(r.conf, "name"), json_object_get(cur->entry, "name"));
	if (p->live_other) {
		p->live_seen = cur->gen;
		ng_opod_log("info", "policy_other_network", p,
			    "its record is of network \"%.100s\", not the followed entry's: it keeps its "
			    "own policy",
			    json_string_value(json_object_get(r.conf, "name"))
				    ? json_string_value(json_object_get(r.conf, "name"))
				    : "");
	} else if (r.generation == cur->gen || ng_entry_is(r.conf, cur->entry)) {
		p->live_gen = cur->gen; /* ADD read the current entry already */
	} else {
		replan(p, cur, &r, env, st);
	}
	ng_record_free(&r);
}

/* The pods a pass visits, spread over the workers. */
struct pass {
	const struct ng_policygen *cur;
	struct ng_opod **todo;
	size_t n;
	atomic_size_t next;
};

struct worker {
	struct pass *pass;
	struct ng_opod_env env; /* its own node-side socket */
	struct ng_livepods_stats st;
	pthread_t t;
	bool started;
};

static void *work(void *data)
{
	struct worker *w = data;
	size_t i;

	while ((i = atomic_fetch_add(&w->pass->next, 1)) < w->pass->n)
		visit(w->pass->todo[i], w->pass->cur, &w->env, &w->st);
	return NULL;
}

static void add_stats(struct ng_livepods_stats *to, const struct ng_livepods_stats *s)
{
	to->replans += s->replans;
	to->replan_errors += s->replan_errors;
	to->dropped += s->dropped;
	to->cut += s->cut;
}

/* Visits `todo` on the workers (this thread waits), or here when there is
 * one pod or no worker socket. */
static void visit_all(struct ng_livepods *lp, struct pass *ps, const struct ng_opod_env *env)
{
	struct worker w[NG_LIVE_WORKERS] = {0}, here = {.pass = ps, .env = *env};
	size_t k = ps->n < lp->n ? ps->n : lp->n;

	if (k <= 1) {
		for (size_t i = 0; i < ps->n; i++)
			visit(ps->todo[i], ps->cur, env, &lp->st);
		return;
	}
	for (size_t i = 0; i < k; i++) {
		w[i].pass = ps;
		w[i].env = *env;
		w[i].env.node_nl = &lp->node[i];
		w[i].started = pthread_create(&w[i].t, NULL, work, &w[i]) == 0;
	}
	/* this thread takes its share too, with its own socket */
	work(&here);
	add_stats(&lp->st, &here.st);
	for (size_t i = 0; i < k; i++) {
		if (w[i].started)
			pthread_join(w[i].t, NULL);
		add_stats(&lp->st, &w[i].st);
	}
}

void ng_livepods_init(struct ng_livepods *lp)
{
	struct ng_err err = {0};

	memset(lp, 0, sizeof(*lp));
	while (lp->n < NG_LIVE_WORKERS && ng_nl_open(&lp->node[lp->n], &err) == 0) {
		lp->portids[lp->n] = lp->node[lp->n].portid;
		lp->n++;
	}
}

void ng_livepods_close(struct ng_livepods *lp)
{
	for (size_t i = 0; i < lp->n; i++)
		ng_nl_close(&lp->node[i]);
	lp->n = 0;
}

void ng_livepods_run(struct ng_livepods *lp, const struct ng_policygen *cur, struct ng_opod *const *pods,
		     size_t n, const struct ng_opod_env *env, struct ng_view_policy *vp)
{
	struct pass ps = {.cur = cur};
	int64_t now = ng_mono_ms();

	for (size_t i = 0; i < n; i++) {
		struct ng_opod *p = pods[i];
		bool waiting = p->live_seen == cur->gen && (p->live_other || now < p->live_retry_ms);

		if (ng_opod_enforced(p) && p->nl_open && p->pol_ok && p->live_gen != cur->gen && !waiting)
			ps.n++;
	}
	/* an array of pointers: one pointer per pod */
	if (ps.n && !(ps.todo = calloc(ps.n, sizeof(*ps.todo)))) // NOLINT(bugprone-sizeof-expression)
		ps.n = 0;                                        /* out of memory: the next pass */
	ps.n = 0;
	for (size_t i = 0; ps.todo && i < n; i++) {
		struct ng_opod *p = pods[i];
		bool waiting = p->live_seen == cur->gen && (p->live_other || now < p->live_retry_ms);

		if (ng_opod_enforced(p) && p->nl_open && p->pol_ok && p->live_gen != cur->gen && !waiting)
			ps.todo[ps.n++] = p;
	}
	visit_all(lp, &ps, env);
	free(ps.todo);
	for (size_t i = 0; i < n; i++) {
		struct ng_opod *p = pods[i];

		p->vp.behind = false;
		p->vp.generation = p->live_gen;
		if (!ng_opod_enforced(p) || !p->nl_open || !p->pol_ok || p->live_other)
			continue;
		vp->pods++;
		if (p->live_gen != cur->gen) {
			p->vp.behind = true;
			vp->behind++;
			vp->failed += p->live_seen == cur->gen;
		}
	}
}
