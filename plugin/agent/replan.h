/* A running pod re-planned: the one path of a grant change
 * (agent/grants.h) and of a live policy change (agent/livepolicy.h), on
 * the ops thread:
 *
 *   - `next` is the pod's record as it will be (its new ADD stdin and
 *     fields); its policy comes from there through the one path of ADD
 *     (state/recpolicy.h; a "resolve" pod's names asked again, as a repair
 *     does) and is applied both sides with what was learned for the pod,
 *     one transaction per namespace, under the pod's commit lock
 *     (agent/podlock.h);
 *   - in the same hold of the lock the record is written, only in place
 *     of the file the watch read (state/record.h): a DEL or a retried ADD
 *     meanwhile wins, and what was applied is undone; the learner commits
 *     nothing more with the old policy and takes the pod on again (a new
 *     nonce);
 *   - every live flow the new policy no longer admits is cut (conntrack,
 *     policy/admits.h); a flow it admits is never touched;
 *   - the watch's copy of the pod follows (record, compiled policy, file):
 *     its drift watch and CHECK compare with the new policy from now on,
 *     and the commits were the agent's own sockets', never drift. */
#ifndef NG_REPLAN_H
#define NG_REPLAN_H

#include "agent/opspod.h"
#include "agent/podlock.h"
#include "base/err.h"
#include "state/record.h"

struct ng_replan_result {
	struct ng_podlock_stats st;
	unsigned cut;        /* live flows cut */
	char cut_error[160]; /* "" or why the cut failed (the tables are applied) */
};

/* 0 applied (`next` handed over to p), 1 skipped (the pod's record is
 * gone or another: DEL or a retried ADD), -1 with err (nothing changed
 * that the drift watch would not see); `next` is the caller's to free
 * unless 0. */
int ng_replan(struct ng_opod *p, const struct ng_opod_env *env, struct ng_record *next,
	      struct ng_replan_result *res, struct ng_err *err);

#endif
