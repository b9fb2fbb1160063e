/* A running pod re-planned. See replan.h. */
#include "agent/replan.h"

#include <stdio.h>
#include <string.h>

#include "kernel/ctdump.h"
#include "node/podstate.h"
#include "policy/admits.h"
#include "state/recpolicy.h"

struct hold {
	struct ng_opod *p; /* (only this thread uses its sockets meanwhile) */
	const struct ng_opod_env *env;
	const struct ng_record *next;
	uint64_t ino; /* the new record's */
};

/* Under the pod's lock, before anything is sent. What the learner
 * committed for the pod so far is read off the pod's event socket now,
 * while the learner socket that made it is still the one the learner
 * publishes (the re-plan makes the learner take the pod on again, with
 * another socket): its own changes are never taken for drift. */
static bool still(void *data)
{
	const struct hold *h = data;

	ng_opod_read_events(&h->p, 1, h->p->ev_fd, false, h->env);
	return ng_opod_recorded(h->p, h->env);
}

/* Under the pod's lock, right after the tables: the record follows. */
static int write_record(void *data, struct ng_err *err)
{
	struct hold *h = data;

	return ng_record_replace(h->env->state_dir, h->next, h->p->file_ino, &h->ino, err);
}

static bool gone(const struct ng_flow *f, void *pol)
{
	return !ng_policy_admits(pol, f);
}

/* The watch's copy of the pod is the new record from now on. */
static void follow(struct ng_opod *p, struct ng_record *next, uint64_t ino, struct ng_policy *pol)
{
	ng_record_free(&p->d);
	p->d = *next;
	memset(next, 0, sizeof(*next));
	/* as ng_opod_load keeps it: the compiled policy, not ADD's stdin */
	json_decref(p->d.conf);
	p->d.conf = NULL;
	p->file_ino = ino;
	if (p->d.generation) /* a grant change keeps the generation its record had */
		p->live_gen = p->d.generation;
	if (p->pol_ok)
		ng_policy_free(&p->pol);
	p->pol = *pol;
	p->pol_ok = true;
	ng_podstate_from_record(&p->d, &p->vp);
	p->link_diff[0] = '\0';
	/* The next CHECK (periodic, or an event's) compares with the new
	 * policy; none is forced now: a change re-plans every pod of the node
	 * at once, and 200 CHECKs right after would only delay the next. */
}

int ng_replan(struct ng_opod *p, const struct ng_opod_env *env, struct ng_record *next,
	      struct ng_replan_result *res, struct ng_err *err)
{
	const struct ng_record_table *host = ng_record_host_table(next);
	struct hold h = {p, env, next, 0};
	struct ng_podlock_hooks hooks = {still, write_record, &h};
	struct ng_recpolicy rp;
	struct ng_policy watch;
	struct ng_err cerr = {0};
	int rc;

	memset(res, 0, sizeof(*res));
	if (!p->nl_open)
		return ng_fail(err, NG_E_NETNS, "the pod's network namespace is not open");
	/* What the watch and CHECK will compare with (no names asked). */
	if (ng_record_policy(next, &watch, err) < 0)
		return -1;
	rc = ng_podstate_rebuild(next, &rp, err);
	if (rc == 0)
		rc = ng_record_new_nonce(next, err);
	if (rc == 0)
		rc = ng_podlock_apply(env->locks, p->d.key, &p->nl, env->node_nl, &rp.pp.policy,
				      host ? host->name : "", &hooks, &res->st, err);
	if (rc == 2) {
		/* applied, but the record had gone (DEL) or changed hands */
		ng_opod_undo(p, next, host ? host->name : "");
		rc = 1;
	}
	if (rc != 0) {
		ng_policy_free(&watch);
		ng_recpolicy_free(&rp);
		return rc;
	}
	/* What the old policy let establish and the new one does not admit
	 * goes now (rp's policy carries the learned elements it kept); nothing
	 * to look for when the new one admits all the old one did. */
	if (!(p->pol_ok && ng_policy_covers(&rp.pp.policy, &p->pol)) &&
	    ng_ct_cut(&p->nl, gone, &rp.pp.policy, &res->cut, &cerr) < 0)
		snprintf(res->cut_error, sizeof(res->cut_error), "%.150s", cerr.msg);
	ng_recpolicy_free(&rp);
	follow(p, next, h.ino, &watch);
	return 0;
}
