/* One pod in the ops thread: picked up from its record, its namespace's
 * events read, CHECKed, repaired, counted. See opspod.h. */
#include "agent/opspod.h"

#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/alog.h"
#include "agent/learncheck.h"
#include "agent/podlock.h"
#include "base/clock.h"
#include "base/nlwalk.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"
#include "kernel/podtables.h"
#include "node/podstate.h"
#include "policy/linkdiff.h"
#include "state/recpolicy.h"

void ng_opod_log(const char *level, const char *event, const struct ng_opod *p, const char *fmt, ...)
{
	char pod[520];
	va_list ap;

	/* The learner's shape: "pod" is namespace/name, "record" the key. */
	if (p)
		ng_podref_name(&p->d.pod, pod, sizeof(pod));
	va_start(ap, fmt);
	ng_alogv(level, event, p ? pod : NULL, p ? p->d.key : NULL, fmt, ap);
	va_end(ap);
}

bool ng_opod_enforced(const struct ng_opod *p)
{
	return !strcmp(p->d.decision, "enforced");
}

/* Each socket closed once, whoever asks first. */
static void close_sockets(struct ng_opod *p)
{
	if (p->ev_fd >= 0)
		close(p->ev_fd);
	p->ev_fd = -1;
	if (p->nl_open)
		ng_nl_close(&p->nl);
	p->nl_open = false;
}

void ng_opod_unwatch(struct ng_opod *p)
{
	ng_opod_log("info", "pod_unwatched", p, "its network namespace is gone");
	close_sockets(p);
	snprintf(p->vp.read_error, sizeof(p->vp.read_error), "the pod's network namespace is gone");
	p->vp.read_ok = false;
}

void ng_opod_free(struct ng_opod *p)
{
	close_sockets(p);
	if (p->pol_ok)
		ng_policy_free(&p->pol);
	ng_record_free(&p->d);
	ng_view_pod_free(&p->vp);
	free(p);
}

/* The sockets inside the pod's namespace: queries and events. */
static int open_pod(struct ng_opod *p, struct ng_err *err)
{
	int fd, rc = ng_netns_open_pod(&p->d.pod, &fd, err);

	if (rc != 0)
		return rc;
	rc = ng_nl_open_netns(fd, NULL, &p->nl, err);
	if (rc == 0) {
		p->nl_open = true;
		p->ev_fd = ng_nft_events_open(fd, err);
		rc = p->ev_fd < 0 ? -1 : 0;
	}
	close(fd);
	return rc;
}

struct ng_opod *ng_opod_load(const char *path, uint64_t ino)
{
	struct ng_opod *p = calloc(1, sizeof(*p));
	struct ng_err err = {0};
	int rc;

	if (!p)
		return NULL;
	p->ev_fd = -1;
	p->fresh = true;
	p->file_ino = ino;
	p->loaded_ms = ng_mono_ms();
	p->seen = true;
	if (ng_record_read(path, &p->d, &err) < 0) {
		ng_opod_log("error", "decision_unusable", NULL, "%s", err.msg);
		free(p);
		return NULL;
	}
	ng_podstate_from_record(&p->d, &p->vp);
	p->live_gen = p->d.generation;
	if (!ng_opod_enforced(p))
		return p;
	if (ng_record_policy(&p->d, &p->pol, &err) < 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "policy: %.150s", err.msg);
		ng_opod_log("error", "policy_unusable", p, "%s", err.msg);
		return p;
	}
	p->pol_ok = true;
	/* Memory per watched pod: the compiled policy stays, ADD's stdin goes
	 * (a repair reads the record again). */
	json_decref(p->d.conf);
	p->d.conf = NULL;
	rc = open_pod(p, &err);
	if (rc != 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "%.150s",
			 rc > 0 ? "the pod's network namespace is gone" : err.msg);
		if (rc < 0)
			ng_opod_log("error", "pod_unwatched", p, "%s", err.msg);
		return p;
	}
	/* A first CHECK at once: a change made before the socket existed
	 * sent its event to nobody. */
	p->check_due = true;
	p->next_collect_ms = 0;
	return p;
}

/* Port id 0 is the kernel itself (a timed-out element, its own garbage
 * collection); then this thread's sockets and the learner's. */
static bool is_self(const struct ng_opod *p, const struct ng_opod_env *env, bool node, uint32_t portid)
{
	if (portid == 0)
		return true;
	if (node ? env->node_nl && portid == env->node_nl->portid : p->nl_open && portid == p->nl.portid)
		return true;
	for (size_t i = 0; node && i < env->n_self_node; i++)
		if (portid == env->self_node[i])
			return true;
	return env->learner_owns && env->learner_owns(env->learner_data, p->d.key, node, portid);
}

/* One of the pod's tables (on that side), by name and family? */
static bool pods_table(const struct ng_opod *p, bool node, const struct ng_nft_event *ev)
{
	for (size_t i = 0; i < p->d.tables.n; i++) {
		const struct ng_record_table *t = &p->d.tables.v[i];

		if (t->in_node == node && t->family == ev->family && !strcmp(t->name, ev->table))
			return true;
	}
	return false;
}

/* Is the pod still what its record file says: there, and the same file
 * (a retried ADD writes a new one)? A DEL removes the record before the
 * tables, so a CHECK that fails, or an event of a table going, for a pod
 * whose record is gone is that DEL's, never drift. */
bool ng_opod_recorded(const struct ng_opod *p, const struct ng_opod_env *env)
{
	char path[4600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", env->state_dir, p->d.key);
	return stat(path, &st) == 0 && (uint64_t)st.st_ino == p->file_ino;
}

/* One drift event per pod and read: a `flush table` is thirty rule
 * deletions, one change to an operator. */
static void drift(struct ng_opod *p, bool node, const struct ng_opod_env *env)
{
	const struct ng_nft_event *ev = &p->batch_first;
	char obj[80] = "";

	p->vp.drift_events++;
	env->local->drift_events++;
	if (ev->object[0])
		snprintf(obj, sizeof(obj), " (%s)", ev->object);
	ng_opod_log("warning", "drift", p, "%s side: %s in table %s %s%s by netlink port %u%s%u change(s))",
		    node ? "node" : "pod", ng_nft_event_what(ev->type),
		    ev->family == NFPROTO_NETDEV ? "netdev" : "inet", ev->table, obj, ev->portid, " (",
		    p->batch_n);
	p->batch_n = 0;
	p->check_now = true;
}

void ng_opod_read_events(struct ng_opod *const *pods, size_t n, int fd, bool node,
			 const struct ng_opod_env *env)
{
	char buf[65536] __attribute__((aligned(4)));
	struct ng_opod *owner = NULL;
	ssize_t len;

	for (size_t i = 0; i < n && !node && !owner; i++)
		if (pods[i]->ev_fd == fd)
			owner = pods[i];
	if (!node && !owner)
		return;
	while ((len = ng_nl_recv_kernel(fd, buf, sizeof(buf))) != 0) {
		if (len < 0) {
			if (errno == ENOBUFS) {
				/* Events were lost: look at everything this socket
				 * watches (ops.c also looks at the node's tables'
				 * presence at once). */
				env->local->events_lost++;
				if (ng_alog_due(env->local->events_lost, 1))
					ng_opod_log(
						"warning", "drift_events_lost", owner,
						"%s event socket overrun (%llu so far): the kernel dropped "
						"nf_tables events; every pod it watches is CHECKed",
						node ? "the node's" : "the pod's",
						(unsigned long long)env->local->events_lost);
				for (size_t i = 0; i < n; i++)
					if (node || pods[i] == owner)
						pods[i]->check_due = true;
				continue;
			}
			break;
		}
		size_t left = (size_t)len;

		for (const struct nlmsghdr *h = (const struct nlmsghdr *)buf; ng_nlmsg_ok(h, left);
		     h = ng_nlmsg_next(h, &left)) {
			struct ng_nft_event ev;

			if (ng_nft_event_parse(h, &ev) < 0)
				continue;
			for (size_t i = 0; i < n; i++) {
				struct ng_opod *p = pods[i];

				if ((!node && p != owner) || (node && p->fresh) || !ng_opod_enforced(p) ||
				    !pods_table(p, node, &ev) || is_self(p, env, node, ev.portid))
					continue;
				/* Name the change that matters most: a deleted table
				 * arrives as its rules' deletions first. */
				if (p->batch_n++ == 0 || ev.type == NFT_MSG_DELTABLE) {
					p->batch_first = ev;
					p->batch_node = node;
				}
			}
		}
	}
}

unsigned ng_opod_report(struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env)
{
	unsigned drifts = 0;

	for (size_t i = 0; i < n; i++) {
		if (!pods[i]->batch_n)
			continue;
		/* Read after the directory's events: a DEL's own deletions
		 * (its record already gone) may be among them. */
		if (!ng_opod_recorded(pods[i], env)) {
			pods[i]->batch_n = 0;
			continue;
		}
		drift(pods[i], pods[i]->batch_node, env);
		drifts++;
	}
	return drifts;
}

unsigned ng_opod_events(struct ng_opod *const *pods, size_t n, int fd, bool node,
			const struct ng_opod_env *env)
{
	ng_opod_read_events(pods, n, fd, node, env);
	return ng_opod_report(pods, n, env);
}

struct still_ctx {
	const struct ng_opod *p;
	const struct ng_opod_env *env;
};

static bool still_recorded(void *data)
{
	const struct still_ctx *c = data;

	return ng_opod_recorded(c->p, c->env);
}

/* The DEL came while the repair or re-plan committed (its record went
 * after the last look): what it made goes again, as DEL removes it. */
void ng_opod_undo(struct ng_opod *p, const struct ng_record *d, const char *host_table)
{
	struct ng_err err = {0};
	const char *what = "";
	char owner[256];

	if (ng_podtables_delete(d->pod.netns, d->pod.container_id, d->pod.ifname, host_table, &what, owner,
				sizeof(owner), &err) < 0)
		ng_opod_log("error", "repair_undone", p,
			    "the pod's DEL came during the repair; removing "
			    "its tables again failed: %s",
			    err.msg);
	else
		ng_opod_log("info", "repair_undone", p, "the pod's DEL came during the repair: %s", what);
}

/* Re-applies the recorded policy, with what the agent learned for the
 * pod, in one transaction per namespace (agent/podlock.h); true when it
 * did. */
static bool repair(struct ng_opod *p, const struct ng_opod_env *env)
{
	struct still_ctx sc = {p, env};
	const struct ng_record_table *host;
	struct ng_recpolicy rp = {0};
	struct ng_record d = {0};
	struct ng_err err = {0};
	char path[4600];
	struct ng_podlock_stats st = {0};
	int rc;

	/* The record again, from disk (the watch keeps only the compiled
	 * policy in memory); a DEL removes it before the tables: no record,
	 * no repair (asked again under the pod's lock, just before the
	 * commit). */
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s.json", env->state_dir, p->d.key);
	if (!ng_opod_recorded(p, env)) {
		ng_opod_log("info", "repair_skipped", p,
			    "the pod's record is gone or rewritten (DEL, or a "
			    "retried ADD)");
		return false;
	}
	rc = ng_record_read(path, &d, &err);
	if (rc == 0 && strcmp(d.key, p->d.key) != 0)
		rc = ng_fail(&err, NG_E_DECODE, "decision record %s changed hands", path);
	host = rc == 0 ? ng_record_host_table(&d) : NULL;
	if (rc == 0)
		rc = ng_podstate_rebuild(&d, &rp, &err);
	if (rc == 0) {
		struct ng_podlock_hooks hooks = {.still = still_recorded, .data = &sc};

		rc = ng_podlock_apply(env->locks, p->d.key, &p->nl, env->node_nl, &rp.pp.policy,
				      host ? host->name : "", &hooks, &st, &err);
	}
	if (rc == 0 && !ng_opod_recorded(p, env)) {
		ng_opod_undo(p, &d, host ? host->name : "");
		rc = 1;
	}
	ng_recpolicy_free(&rp);
	ng_record_free(&d);
	if (rc == 1) {
		ng_opod_log("info", "repair_skipped", p, "the pod's record went (DEL) before the commit");
		return false;
	}
	if (rc < 0) {
		p->vp.repair_errors++;
		env->local->repair_errors++;
		ng_opod_log("error", "repair_failed", p, "%s", err.msg);
		return false;
	}
	p->vp.repairs++;
	env->local->repairs++;
	ng_opod_log("info", "repaired", p,
		    "the recorded policy was re-applied with %d learned element(s), one transaction per "
		    "namespace (%lld us; %lld us waiting for the pod's commit lock)",
		    st.learned, (long long)st.apply_us, (long long)st.wait_us);
	return true;
}

/* The live link against the recorded facts: a new difference is drift,
 * logged once (the facts are never adopted: the tables keep the
 * recorded MAC and sources). Into `link` the difference ("" none). */
static void check_link(struct ng_opod *p, const struct ng_opod_env *env, char *link, size_t len)
{
	struct ng_link_facts live;
	struct ng_err err = {0};

	link[0] = '\0';
	if (!p->d.have_link || ng_podstate_link(&p->d, &live, &err) != 0)
		return; /* gone (DEL, or the sweep lets go), or unreadable: not drift */
	if (ng_link_diff(&p->d.link, &live, link, len) > 0 && strcmp(link, p->link_diff) != 0) {
		if (!ng_opod_recorded(p, env)) {
			link[0] = '\0';
			return;
		}
		p->vp.drift_events++;
		env->local->drift_events++;
		ng_opod_log("warning", "drift", p,
			    "pod side: the link is not as ADD recorded it: %s (the recorded facts are kept; "
			    "nothing is adopted)",
			    link);
	}
	snprintf(p->link_diff, sizeof(p->link_diff), "%s", link);
}

/* The tables match the policy: do their learned sets hold what the
 * learner committed (agent/learncheck.h)? 0 yes (or nothing learns), 1 no
 * (diff names the first missing element), -1 could not tell. */
static int check_learned(struct ng_opod *p, const struct ng_opod_env *env, char *diff, size_t len)
{
	struct ng_learncheck lc;
	struct ng_err err = {0};

	if (!env->locks)
		return 0;
	if (ng_learncheck_run(env->locks, &p->nl, env->node_nl, &p->d, &p->pol, &lc, &err) < 0) {
		snprintf(diff, len, "learned sets: %.200s", err.msg);
		return -1;
	}
	if (!lc.missing)
		return 0;
	snprintf(diff, len,
		 "%u learned element(s) the agent committed missing or expiring early; first: %.100s",
		 lc.missing, lc.first);
	return 1;
}

/* The view's verdict: in sync when the tables match (rc 0) and the link
 * is as recorded; the difference, the tables' first. */
static void set_sync(struct ng_opod *p, int rc, const char *diff, const char *link)
{
	p->vp.in_sync = rc == 0 && !link[0];
	snprintf(p->vp.diff, sizeof(p->vp.diff), "%s%s", rc ? diff : link[0] ? "link: " : "", rc ? "" : link);
}

bool ng_opod_check(struct ng_opod *p, const struct ng_opod_env *env, const char *why)
{
	char diff[256], link[200];
	bool was = p->vp.checked && !p->vp.in_sync, repaired;
	int rc;

	if (!p->nl_open || !p->pol_ok)
		return false;
	/* A learning pod the learner has not taken on yet (the agent has just
	 * started): what it learned is in the learner's tracker only once it
	 * has, and a repair before would close those names. The CHECK waits
	 * for it (the tick asks again each second), a few seconds at most. */
	if (p->pol.learn && env->locks && !ng_podlocks_served(env->locks, p->d.key) &&
	    ng_mono_ms() - p->loaded_ms < NG_OPOD_LEARNER_WAIT_MS) {
		p->next_check_ms = ng_mono_ms();
		return false;
	}
	rc = ng_podstate_check(&p->nl, env->node_nl, &p->d, &p->pol, diff, sizeof(diff));
	if (rc == 0)
		rc = check_learned(p, env, diff, sizeof(diff));
	env->local->check_runs++;
	p->next_check_ms = ng_mono_ms() + env->check_ms;
	/* A DEL under way (its record went first) or a retried ADD (a new
	 * record): whatever this CHECK saw is theirs. */
	if (rc != 0 && !ng_opod_recorded(p, env))
		return false;
	if (rc < 0) {
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "check: %.150s", diff);
		return false;
	}
	check_link(p, env, link, sizeof(link));
	p->vp.checked = true;
	p->vp.last_check_ms = ng_wall_ms();
	set_sync(p, rc, diff, link);
	if (rc == 0) {
		/* Nothing to repair (a link that differs is the pod's doing:
		 * the tables already hold the recorded facts). */
		if (was && p->vp.in_sync)
			ng_opod_log("info", "in_sync", p, "the pod's tables match its recorded policy again");
		return false;
	}
	/* A difference the periodic CHECK found first is drift too (no event
	 * told: missed, or made while we were not looking). */
	if (strcmp(why, "drift") != 0) {
		p->vp.drift_events++;
		env->local->drift_events++;
	}
	ng_opod_log("warning", "drift_check", p, "CHECK (%s): %s", why, diff);
	if (env->drift_seen)
		env->drift_seen(env->drift_data, p, diff);
	if (!env->repair)
		return false;
	repaired = repair(p, env);
	p->check_now = p->check_due = false;
	/* Confirm: the repair is itself checked at once. */
	rc = ng_podstate_check(&p->nl, env->node_nl, &p->d, &p->pol, diff, sizeof(diff));
	set_sync(p, rc, diff, link);
	return repaired;
}

void ng_opod_collect(struct ng_opod *p, const struct ng_opod_env *env)
{
	p->next_collect_ms = ng_mono_ms() + NG_OPOD_COLLECT_MS;
	if (!p->nl_open)
		return;
	ng_podstate_read(&p->nl, env->node_nl, &p->d, p->pol_ok ? &p->pol : NULL, &p->vp);
}
