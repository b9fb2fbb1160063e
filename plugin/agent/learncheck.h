/* The ops thread's CHECK of a learning pod's learned sets against what the
 * learner committed to them (its trackers, agent/tracker.h). CHECK proper
 * compares the tables with the policy and cannot know what was learned: a
 * learned element deleted by another hand (a process with NET_ADMIN in
 * the pod, or on the node) closes a name the pod was answered for, and
 * only the learner's view shows it. With --repair the pod's tables are
 * re-applied with every learned element (agent/podlock.h), as for any
 * other drift.
 *
 * Without holding up the pod: the trackers are copied under the pod's
 * commit lock and the kernel read after it is let go. Only when that look
 * finds an element missing is it taken again with the lock held for the
 * reads (the learner parks the pod meanwhile): an answer committed between
 * the copy and the read may have refreshed an element, never removed one,
 * but the second look is what is reported. */
#ifndef NG_AGENT_LEARNCHECK_H
#define NG_AGENT_LEARNCHECK_H

#include <stdint.h>

#include "agent/podlock.h"
#include "base/err.h"
#include "kernel/nl.h"
#include "policy/policy.h"
#include "state/record.h"

/* An element counts when it has more than this left in the learner's view,
 * and is short when the kernel's expiry is earlier by more than this (the
 * learner's expiry is never later than the kernel's). */
#define NG_LEARNCHECK_MARGIN_MS 2000

struct ng_learncheck {
	uint32_t missing; /* elements the learner committed that a table lacks (or holds for less time) */
	char first[200];  /* the first: "pod side: names_v4 10.21.1.1 . tcp . 7443" */
};

/* Pod `d` (policy `pol`, the watch's): its tables' learned sets (the pod's
 * inet table through pod_nl, its node-side tables through node_nl, which
 * may be NULL) against the learner's trackers. 0 (out->missing says), or -1
 * with err (a read failed: nothing is said). Nothing missing when no
 * learner serves the pod. */
int ng_learncheck_run(struct ng_podlocks *locks, struct ng_nl *pod_nl, struct ng_nl *node_nl,
		      const struct ng_record *d, const struct ng_policy *pol, struct ng_learncheck *out,
		      struct ng_err *err);

#endif
