/* Grants that follow the API, events and the condition. See grants.h. */
#include "agent/grants.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agent/grantplan.h"
#include "base/vec.h"
#include "agent/replan.h"
#include "policy/annotations.h"
#include "state/recgrants.h"
#include "state/recpolicy.h"

/* What the grants keep of each pod, by record key. */
struct gpod {
	char key[256];
	uint64_t ino;     /* the record file `recorded` was read from */
	char *recorded;   /* its grant annotation (NULL: none) */
	bool refused_set; /* `refused` was refused: not tried again */
	char *refused;
	bool unreadable_said, refused_said, enforced_said;
	int cond;   /* -1 not posted, 0 False, 1 True */
	bool known; /* the API's table has the pod (a condition can be patched) */
	uint64_t drift_seen, repairs_seen;
	char drift_diff[256]; /* what the last CHECK that failed saw, for its event */
	char uid[128];
	bool seen;
};

struct ng_grants {
	struct ng_kube *kube;
	uint64_t gen; /* the table's generation last looked at */
	NG_VEC(struct gpod) pods;
	atomic_ullong applied, refused, failed, cut;
};

struct ng_grants *ng_grants_new(struct ng_kube *kube)
{
	struct ng_grants *g = calloc(1, sizeof(*g));

	if (g)
		g->kube = kube;
	return g;
}

static void gpod_free(struct gpod *gp)
{
	free(gp->recorded);
	free(gp->refused);
}

void ng_grants_free(struct ng_grants *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->pods.n; i++)
		gpod_free(&g->pods.v[i]);
	ng_vec_free(&g->pods);
	free(g);
}

int ng_grants_fd(const struct ng_grants *g)
{
	return g && g->kube ? ng_kube_wake_fd(g->kube) : -1;
}

static struct gpod *gpod_of(struct ng_grants *g, const char *key)
{
	struct gpod n = {.cond = -1};

	for (size_t i = 0; i < g->pods.n; i++)
		if (!strcmp(g->pods.v[i].key, key))
			return &g->pods.v[i];
	snprintf(n.key, sizeof(n.key), "%s", key);
	return ng_vec_push(&g->pods, &n) < 0 ? NULL : &g->pods.v[g->pods.n - 1];
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void event(struct ng_grants *g, const struct ng_opod *p, const struct gpod *gp, bool warning,
		  const char *reason, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void event(struct ng_grants *g, const struct ng_opod *p, const struct gpod *gp, bool warning,
		  const char *reason, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ng_kube_event(g->kube, p->d.pod.ns, p->d.pod.name, gp->uid, warning, reason, msg);
}

static void record_path(const struct ng_opod_env *env, const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s/" NG_PODS_DIR "/%s.json", env->state_dir, key);
}

/* The grant annotation the pod's record holds, read again when the file
 * changed. false when the record cannot be read. */
static bool load_recorded(struct gpod *gp, const struct ng_opod *p, const struct ng_opod_env *env)
{
	char path[4600];
	struct ng_record r;
	struct ng_err err = {0};

	if (gp->ino == p->file_ino && gp->ino)
		return true;
	record_path(env, p->d.key, path, sizeof(path));
	if (ng_record_read(path, &r, &err) < 0)
		return false;
	free(gp->recorded);
	gp->recorded = dup_or_null(ng_recgrants_get(r.conf));
	gp->ino = p->file_ino;
	ng_record_free(&r);
	return true;
}

/* Refused as ADD would refuse it: the pod keeps its grants. */
static void refuse(struct ng_grants *g, struct ng_opod *p, struct gpod *gp, const char *egress,
		   const struct ng_err *err)
{
	atomic_fetch_add(&g->refused, 1);
	free(gp->refused);
	gp->refused = dup_or_null(egress);
	gp->refused_set = !egress || gp->refused;
	ng_opod_log("warning", "grant_refused", p,
		    "the API's grants are refused (code %d), the pod keeps its own: %s", err->code, err->msg);
	event(g, p, gp, true, "NetguardGrantRefused",
	      "grant refused (code %d), the pod keeps its current grants: %s", err->code, err->msg);
}

static void replan(struct ng_grants *g, struct ng_opod *p, struct gpod *gp, const struct ng_opod_env *env,
		   const char *egress)
{
	char path[4600], now_list[2048], gone_list[2048];
	struct ng_record r;
	struct ng_recpolicy old = {0}, now = {0};
	struct ng_replan_result res;
	struct ng_err err = {0};
	ng_dest_vec removed = {0};
	json_t *old_conf;
	int rc;

	record_path(env, p->d.key, path, sizeof(path));
	if (ng_record_read(path, &r, &err) < 0) {
		ng_opod_log("error", "grant_unapplied", p, "%s", err.msg);
		return;
	}
	old_conf = r.conf;
	r.conf = ng_recgrants_with(old_conf, egress);
	if (!r.conf) {
		r.conf = old_conf;
		ng_record_free(&r);
		return;
	}
	if (ng_recpolicy_build(&r, NULL, NULL, &now, &err) < 0) {
		refuse(g, p, gp, egress, &err);
		goto out;
	}
	{
		struct ng_record o = r;

		o.conf = old_conf;
		if (ng_recpolicy_build(&o, NULL, NULL, &old, &err) < 0) {
			ng_opod_log("error", "grant_unapplied", p, "the recorded policy: %s", err.msg);
			goto out;
		}
	}
	/* Not Ready while its grants change (readiness gate). */
	gp->cond = 0;
	ng_kube_condition(g->kube, p->d.pod.ns, p->d.pod.name, false, "GrantsChanging",
			  "netguard is applying new grants");
	/* The one re-plan path (agent/replan.h): both sides under the pod's
	 * lock with the record in the same hold, and every live flow the new
	 * grants no longer admit cut. */
	/* Its entry is the generation the watch knows it runs (a record ADD
	 * stamped 0, found to be the current entry: agent/livepolicy.h). */
	if (!r.generation)
		r.generation = p->live_gen;
	rc = ng_replan(p, env, &r, &res, &err);
	if (rc == 1) {
		ng_opod_log("info", "grant_skipped", p,
			    "the pod's record went or changed (DEL, a retried ADD)");
		goto out;
	}
	if (rc < 0) {
		atomic_fetch_add(&g->failed, 1);
		ng_opod_log("error", "grant_apply_failed", p, "%s", err.msg);
		event(g, p, gp, true, "NetguardGrantApplyFailed", "applying the new grants failed: %s",
		      err.msg);
		goto out;
	}
	if (res.cut_error[0])
		ng_opod_log("error", "grant_cut_failed", p, "live flows no longer granted: %s",
			    res.cut_error);
	atomic_fetch_add(&g->cut, res.cut);
	free(gp->recorded);
	gp->recorded = dup_or_null(egress);
	gp->refused_set = false;
	gp->ino = p->file_ino;
	if (ng_grantplan_removed(&old.pp.ann.grants, &now.pp.ann.grants, &removed) < 0)
		removed.n = 0;
	atomic_fetch_add(&g->applied, 1);
	ng_grantplan_list(&now.pp.ann.grants, now_list, sizeof(now_list));
	ng_grantplan_list(&removed, gone_list, sizeof(gone_list));
	ng_opod_log("info", "grants_updated", p, "grants now: %s; withdrawn: %s (%u live flow(s) cut)",
		    now_list, gone_list, res.cut);
	event(g, p, gp, false, "NetguardGrantsUpdated", "grants now: %s; withdrawn: %s (%u live flow(s) cut)",
	      now_list, gone_list, res.cut);
out:
	ng_vec_free(&removed);
	ng_recpolicy_free(&old);
	ng_recpolicy_free(&now);
	json_decref(old_conf);
	ng_record_free(&r);
}

/* The API's view of the pod against its record. */
static void follow(struct ng_grants *g, struct ng_opod *p, struct gpod *gp, const struct ng_opod_env *env)
{
	struct ng_kpod kp;
	bool known = ng_kube_lookup(g->kube, p->d.pod.ns, p->d.pod.name, &kp);

	/* A pod the API did not have yet gets its condition now. */
	if (known && !gp->known)
		gp->cond = -1;
	gp->known = known;
	if (!known)
		return;
	snprintf(gp->uid, sizeof(gp->uid), "%s", kp.uid);
	if (!p->nl_open || !p->pol_ok) {
		/* nothing to apply to */
	} else if (!kp.readable) {
		if (!gp->unreadable_said)
			ng_opod_log("warning", "grant_unreadable", p,
				    "the API's annotations of the pod are not strings: it keeps its grants");
		gp->unreadable_said = true;
	} else if (load_recorded(gp, p, env) && !ng_grantplan_same(kp.egress, gp->recorded) &&
		   !(gp->refused_set && ng_grantplan_same(kp.egress, gp->refused))) {
		gp->unreadable_said = false;
		replan(g, p, gp, env, kp.egress);
	}
	ng_kpod_free(&kp);
}

/* Events for what the watch saw, and the condition. */
static void report(struct ng_grants *g, struct ng_opod *p, struct gpod *gp, const struct ng_opod_env *env)
{
	const struct ng_view_pod *v = &p->vp;
	bool ok = p->nl_open && v->checked && v->in_sync;

	/* A reloaded pod (its record rewritten) counts from zero again. */
	if (v->drift_events < gp->drift_seen || v->repairs < gp->repairs_seen) {
		gp->drift_seen = v->drift_events;
		gp->repairs_seen = v->repairs;
	}
	if (v->drift_events > gp->drift_seen) {
		/* (a repaired pod's view differs no more: what its CHECK saw) */
		const char *diff = v->diff[0] ? v->diff : gp->drift_diff;

		event(g, p, gp, true, "NetguardDrift",
		      "the pod's tables were changed by someone else%s%.300s", diff[0] ? ": " : "", diff);
		gp->drift_diff[0] = '\0';
	}
	if (v->repairs > gp->repairs_seen)
		event(g, p, gp, false, "NetguardRepaired",
		      "the recorded policy was re-applied (one transaction)");
	gp->drift_seen = v->drift_events;
	gp->repairs_seen = v->repairs;
	if (!v->checked && !v->read_error[0])
		return; /* no CHECK yet: nothing to say */
	if (gp->cond != (int)ok && gp->known) {
		char msg[NG_ANN_VALUE_MAX + 128];

		if (ok && !load_recorded(gp, p, env))
			ok = false; /* no record: nothing to name */

		/* The grants in force, as the annotation wrote them: a sandbox
		 * manager waits for the condition to name its session's grants
		 * (or none) before it hands the pod on (README "Per-session
		 * grants"). */
		snprintf(msg, sizeof(msg),
			 "both sides of the pod's policy verified (CHECK passed); grants: %s",
			 gp->recorded ? gp->recorded : "none");
		ng_kube_condition(g->kube, p->d.pod.ns, p->d.pod.name, ok, ok ? "Enforced" : "NotEnforced",
				  ok ? msg
				     : (v->diff[0]         ? v->diff
					: v->read_error[0] ? v->read_error
							   : "CHECK failed"));
		gp->cond = ok;
	}
	if (ok && !gp->enforced_said) {
		event(g, p, gp, false, "NetguardEnforced",
		      "both sides of the pod's policy verified (CHECK passed)");
		gp->enforced_said = true;
	}
}

void ng_grants_run(struct ng_grants *g, struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env)
{
	uint64_t gen;

	if (!g || !g->kube)
		return;
	ng_kube_clear_wake(g->kube);
	gen = ng_kube_generation(g->kube);
	for (size_t i = 0; i < g->pods.n; i++)
		g->pods.v[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct ng_opod *p = pods[i];
		struct gpod *gp = gpod_of(g, p->d.key);

		if (!gp)
			continue;
		gp->seen = true;
		if (p->d.refused_file || !strcmp(p->d.decision, "refused") ||
		    !strcmp(p->d.decision, "error")) {
			if (!gp->refused_said && p->d.pod.ns[0] && p->d.pod.name[0])
				ng_kube_event(g->kube, p->d.pod.ns, p->d.pod.name, NULL, true,
					      "NetguardRefused", p->d.reason);
			gp->refused_said = true;
			continue;
		}
		if (!ng_opod_enforced(p))
			continue;
		/* The table is asked only when it changed or the record did. */
		if (gen != g->gen || gp->ino != p->file_ino)
			follow(g, p, gp, env);
		report(g, p, gp, env);
	}
	g->gen = gen;
	for (size_t i = g->pods.n; i-- > 0;)
		if (!g->pods.v[i].seen) {
			gpod_free(&g->pods.v[i]);
			g->pods.v[i] = g->pods.v[--g->pods.n];
		}
}

void ng_grants_unverified(struct ng_grants *g, const struct ng_opod *p, const char *diff)
{
	struct gpod *gp;

	if (!g || !g->kube || !(gp = gpod_of(g, p->d.key)))
		return;
	snprintf(gp->drift_diff, sizeof(gp->drift_diff), "%s", diff);
	if (!gp->known)
		return; /* not in the API's table (yet): its first condition comes with it */
	ng_kube_condition(g->kube, p->d.pod.ns, p->d.pod.name, false, "Drift", diff);
	gp->cond = 0;
}

void ng_grants_metrics(struct ng_grants *g, FILE *out)
{
	if (!g || !g->kube)
		return;
	fprintf(out,
		"# HELP netguard_agent_grant_changes_total Grant changes read from the API, by outcome.\n"
		"# TYPE netguard_agent_grant_changes_total counter\n"
		"netguard_agent_grant_changes_total{outcome=\"applied\"} %llu\n"
		"netguard_agent_grant_changes_total{outcome=\"refused\"} %llu\n"
		"netguard_agent_grant_changes_total{outcome=\"failed\"} %llu\n",
		(unsigned long long)atomic_load(&g->applied), (unsigned long long)atomic_load(&g->refused),
		(unsigned long long)atomic_load(&g->failed));
	fprintf(out,
		"# HELP netguard_agent_grant_flows_cut_total Live flows of withdrawn grants deleted from "
		"conntrack.\n# TYPE netguard_agent_grant_flows_cut_total counter\n"
		"netguard_agent_grant_flows_cut_total %llu\n",
		(unsigned long long)atomic_load(&g->cut));
}
