/* The learner's pods, by record key. See learner.h. */
#include "agent/learner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/alog.h"
#include "agent/query.h"
#include "base/clock.h"
#include "kernel/netns.h"
#include "state/ready.h"
#include "state/record.h"

int ng_learner_init(struct ng_learner *l, const char *state_dir, int epfd, struct ng_nl *node_nl)
{
	struct ng_err err = {0};

	memset(l, 0, sizeof(*l));
	l->state_dir = state_dir;
	l->epfd = epfd;
	l->sh.node_nl = node_nl;
	/* In the node's namespace: what the host peers saw. Without it the
	 * node side learns nothing (the pods' own tables still do). */
	if (ng_observer_open(&l->obs, &err) < 0)
		ng_alog("error", "observer_unusable", NULL, NULL,
			"%s: node-side tables learn nothing until the agent restarts", err.msg);
	l->sh.obs = &l->obs;
	if (ng_podlocks_init(&l->locks) < 0)
		return -1;
	return ng_answer_scratch_init(&l->scratch);
}

int ng_learner_observer_fd(const struct ng_learner *l)
{
	return ng_observer_fd(&l->obs);
}

void ng_learner_observe(struct ng_learner *l)
{
	ng_observer_drain(&l->obs);
}

static struct ng_pod *find(const struct ng_learner *l, const char *key)
{
	for (size_t i = 0; i < l->pods.n; i++)
		if (!strcmp(l->pods.v[i]->key, key))
			return l->pods.v[i];
	return NULL;
}

static void release(struct ng_learner *l, struct ng_pod *p, const char *why)
{
	char key[sizeof(p->key)];

	for (size_t i = 0; i < l->pods.n; i++)
		if (l->pods.v[i] == p) {
			l->pods.v[i] = l->pods.v[--l->pods.n];
			break;
		}
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, p->q.fd, NULL);
	ng_pod_log("info", "pod_released", p, "%s", why);
	p->c.node_unmatched = p->nodeseen.seen.c.unmatched;
	ng_counters_add(&l->released, &p->c);
	snprintf(key, sizeof(key), "%s", p->key);
	/* A rebuild under way reads the tracker: it goes only once the
	 * rebuild is done, and none reads it after. */
	ng_podlock_lock(p->lock);
	ng_podlock_attach(p->lock, NULL, NULL);
	ng_podlock_attach_taught(p->lock, NULL);
	ng_podlock_unlock(p->lock);
	ng_podlock_put(&l->locks, p->lock);
	/* The sockets go before the ready file: DEL waits for that file. */
	ng_ka_cancel(l->sh.ka, key);
	ng_pod_free(p, &l->sh);
	ng_record_clear_ready(l->state_dir, key);
}

void ng_learner_free(struct ng_learner *l)
{
	while (l->ka_held) {
		struct ng_ka_job *j = l->ka_held;

		l->ka_held = j->next;
		ng_ka_job_free(j);
	}
	while (l->pods.n)
		release(l, l->pods.v[l->pods.n - 1], "agent stopping");
	ng_vec_free(&l->pods);
	ng_answer_scratch_free(&l->scratch);
	ng_observer_close(&l->obs);
	ng_podlocks_free(&l->locks);
}

/* A record the learner serves: a pod whose names it learns, being added
 * or enforced. */
static bool learns(const struct ng_record *r)
{
	return r->learn && !r->refused_file &&
	       (!strcmp(r->decision, "pending") || !strcmp(r->decision, "enforced"));
}

/* A new pod for record r: opened, its queue watched, its ready file
 * written (ADD waits for it). */
static int take_on(struct ng_learner *l, struct ng_record *r, uint64_t ino)
{
	struct ng_err err = {0};
	struct ng_pod *p;
	int64_t t0 = ng_mono_us();

	if (ng_pod_open(r, &l->sh, &p, &err) < 0) {
		ng_alog("error", "pod_unusable", NULL, NULL, "%s: %s", r->key, err.msg);
		return -1;
	}
	p->seen = true;
	p->rec_ino = ino;
	p->lock = ng_podlock_get(&l->locks, p->key);
	if (!p->lock) {
		ng_pod_log("error", "pod_unusable", p, "out of memory");
		ng_pod_free(p, &l->sh);
		return -1;
	}

	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};
	/* the vector holds pointers: &p is the element to copy */
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, p->q.fd, &ev) < 0 ||
	    ng_vec_push(&l->pods, &p) < 0) { // NOLINT(bugprone-sizeof-expression)
		ng_pod_log("error", "pod_unusable", p, "cannot watch its queue: %s", strerror(errno));
		ng_podlock_put(&l->locks, p->lock);
		ng_pod_free(p, &l->sh);
		return -1;
	}
	/* From now on a repair of the pod carries what it learned. */
	ng_podlock_lock(p->lock);
	ng_podlock_attach(p->lock, &p->tr, p->node_side ? &p->tr_node : NULL);
	ng_podlock_attach_taught(p->lock, &p->taught);
	ng_podlock_unlock(p->lock);
	if (ng_record_set_ready(l->state_dir, p->key, p->nonce, &err) < 0)
		ng_pod_log("error", "ready_write", p, "%s", err.msg);
	ng_pod_log("info", "pod_added", p,
		   "serving %zu name entries, %u addresses still learned, picked up in %lld us",
		   p->policy.name_entries.n, ng_tracker_count(&p->tr), (long long)(ng_mono_us() - t0));
	return 0;
}

int ng_learner_load(struct ng_learner *l, const char *name)
{
	char path[4500], key[256];
	struct ng_record r;
	struct ng_err err = {0};
	struct ng_pod *old;
	bool refused;
	struct stat st;
	int rc = 0;

	if (!ng_record_name(name, key, sizeof(key), &refused) || refused)
		return 0; /* a temp file of an ongoing write, a refusal, or not ours */
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s", l->state_dir, name);
	if (ng_record_read(path, &r, &err) < 0) {
		if (access(path, F_OK) == 0)
			ng_alog("error", "record_unusable", NULL, NULL, "%s", err.msg);
		return -1;
	}
	if (stat(path, &st) < 0)
		st.st_ino = 0;
	old = find(l, r.key);
	/* A pod whose namespace is gone (released by the sweep; its DEL may
	 * come late or never) is not taken on again at every scan: nothing
	 * to serve, and no error. */
	if (!old && learns(&r) && !ng_netns_still_pods(&r.pod)) {
		ng_record_free(&r);
		return 0;
	}
	if (!learns(&r)) {
		if (old)
			release(l, old, "its record no longer asks for learning");
	} else if (old && !strcmp(old->nonce, r.nonce)) {
		/* The same ADD's final record ("pending" to "enforced"). */
		old->seen = true;
		old->rec_ino = (uint64_t)st.st_ino;
	} else {
		if (old) /* a retried ADD: the new record wins */
			release(l, old, "record replaced");
		rc = take_on(l, &r, (uint64_t)st.st_ino);
	}
	ng_record_free(&r);
	return rc;
}

void ng_learner_removed(struct ng_learner *l, const char *name)
{
	char key[256], path[4600];
	struct ng_pod *p;
	bool refused;

	if (!ng_record_name(name, key, sizeof(key), &refused) || refused || !(p = find(l, key)))
		return;
	/* Moved out but still there: exchanged for a new record (a re-plan,
	 * state/record.h), which its own event loads. */
	snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s", l->state_dir, name);
	if (access(path, F_OK) == 0)
		return;
	release(l, p, "its record was removed (DEL)");
}

static bool served(const char *name, void *data)
{
	return find(data, name) != NULL;
}

void ng_learner_scan(struct ng_learner *l)
{
	char dir[4200];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, l->state_dir);
	d = opendir(dir);
	if (!d)
		return;
	for (size_t i = 0; i < l->pods.n; i++)
		l->pods.v[i]->seen = false;
	while ((e = readdir(d))) {
		char key[256];
		struct ng_pod *p;
		struct stat st;
		bool refused;

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused) || refused)
			continue;
		p = find(l, key);
		if (p && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (uint64_t)st.st_ino == p->rec_ino) {
			p->seen = true;
			continue;
		}
		ng_learner_load(l, e->d_name);
	}
	closedir(d);
	for (size_t i = l->pods.n; i-- > 0;)
		if (!l->pods.v[i]->seen)
			release(l, l->pods.v[i], "its record is gone");
	/* Ready files of pods not served (deleted while no agent ran, or a
	 * write a killed agent left): nobody waits for them, and nobody else
	 * would ever remove them. */
	unsigned stale = ng_record_sweep_ready(l->state_dir, served, l);

	if (stale)
		ng_alog("info", "ready_swept", NULL, NULL,
			"%u ready file(s) of pods the agent does not serve removed", stale);
}

/* Its queue unwatched until the ops thread's wake (ng_learner_unpark). */
static void park(struct ng_learner *l, struct ng_pod *p)
{
	struct epoll_event ev = {.events = 0, .data.ptr = p};

	if (!p->parked && epoll_ctl(l->epfd, EPOLL_CTL_MOD, p->q.fd, &ev) == 0)
		p->parked = true;
}

/* A re-plan (live policy, grants) gave the pod a new record and tables:
 * nothing is committed with the old policy any more (agent/podlock.h);
 * the pod is taken on again from its new record now, without waiting for
 * the directory's event. One whose record cannot be read (DEL) goes. */
static void retake(struct ng_learner *l, struct ng_pod *p)
{
	char name[300], key[sizeof(p->key)];
	struct ng_pod *now;

	snprintf(key, sizeof(key), "%s", p->key);
	snprintf(name, sizeof(name), "%s.json", key);
	ng_learner_load(l, name);
	now = find(l, key);
	if (now == p) {
		bool still;

		ng_podlock_lock(p->lock);
		still = ng_podlock_superseded(p->lock);
		ng_podlock_unlock(p->lock);
		if (still)
			release(l, p, "its policy was re-planned and its new record cannot be read");
	}
}

bool ng_learner_serve(struct ng_learner *l, struct ng_pod *p)
{
	if (!ng_podlock_trylock(p->lock)) {
		park(l, p);
		return false;
	}
	if (ng_podlock_superseded(p->lock)) {
		ng_podlock_unlock(p->lock);
		retake(l, p);
		return true;
	}
	ng_answer_serve(p, &l->sh, &l->scratch);
	ng_podlock_unlock(p->lock);
	return false;
}

/* One job back: false when its pod's lock is the ops thread's (the job is
 * kept for the wake); otherwise done, and freed. */
static bool kept_alive_one(struct ng_learner *l, struct ng_ka_job *j)
{
	struct ng_pod *p = find(l, j->key);

	if (p && !strcmp(p->nonce, j->nonce)) {
		/* Its trackers change: under the pod's commit lock, as every
		 * change a repair must carry (agent/podlock.h). */
		if (!ng_podlock_trylock(p->lock))
			return false;
		if (!ng_podlock_superseded(p->lock)) /* not with a policy the tables left */
			ng_pod_kept_alive(p, &l->sh, j);
		ng_podlock_unlock(p->lock);
	}
	ng_ka_job_free(j);
	return true;
}

static void hold(struct ng_learner *l, struct ng_ka_job *j)
{
	j->next = l->ka_held;
	l->ka_held = j;
}

void ng_learner_kept_alive(struct ng_learner *l)
{
	struct ng_ka_job *j;

	while (l->sh.ka && (j = ng_ka_take(l->sh.ka)))
		if (!kept_alive_one(l, j))
			hold(l, j);
}

void ng_learner_unpark(struct ng_learner *l)
{
	struct ng_ka_job *held = l->ka_held, *j;

	ng_podlocks_woken(&l->locks);
	for (size_t i = 0; i < l->pods.n; i++) {
		struct ng_pod *p = l->pods.v[i];
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = p};

		/* Level-triggered: what waited in its queue is reported at
		 * once (or it parks again, the rebuild still under way). */
		if (p->parked && epoll_ctl(l->epfd, EPOLL_CTL_MOD, p->q.fd, &ev) == 0)
			p->parked = false;
	}
	l->ka_held = NULL;
	while ((j = held)) {
		held = j->next;
		j->next = NULL;
		if (!kept_alive_one(l, j))
			hold(l, j);
	}
}

bool ng_learner_sweep(struct ng_learner *l, int64_t now_ms)
{
	bool retaken = false;

	for (size_t i = l->pods.n; i-- > 0;) {
		struct ng_pod *p = l->pods.v[i];

		/* The namespace's path gone or reused: the pod is gone. */
		if (!ng_netns_still_pods(&p->pod))
			release(l, p, "its network namespace is gone");
		else if (ng_podlock_trylock(p->lock)) { /* else rebuilt now: swept next second */
			if (ng_podlock_superseded(p->lock)) {
				/* re-planned: taken on again (a new pod goes to the
				 * end, past this downward walk) */
				ng_podlock_unlock(p->lock);
				retake(l, p);
				retaken = true;
				continue;
			}
			ng_pod_sweep(p, &l->sh, now_ms);
			ng_query_sweep(p, &l->sh, now_ms); /* its queries' own bounds (agent/query.h) */
			ng_podlock_unlock(p->lock);
		}
	}
	return retaken;
}

void ng_learner_publish(const struct ng_learner *l, struct ng_ops *ops, bool serving)
{
	struct ng_ops_agent_pod *pods = calloc(l->pods.n ? l->pods.n : 1, sizeof(*pods));
	uint64_t totals[NG_AC_COUNT] = {0};

	if (!pods)
		return;
	ng_counters_export(&l->released, totals);
	totals[NG_AC_OBSERVER_LOST] += ng_observer_lost(&l->obs);
	for (size_t i = 0; i < l->pods.n; i++) {
		struct ng_pod *p = l->pods.v[i];

		p->c.node_unmatched = p->nodeseen.seen.c.unmatched;
		snprintf(pods[i].key, sizeof(pods[i].key), "%s", p->key);
		pods[i].portid = p->nl.portid;
		pods[i].learned_gen = p->learned_gen;
		ng_counters_export(&p->c, pods[i].ac);
		ng_counters_export(&p->c, totals);
	}
	ng_ops_publish(ops, serving, l->sh.node_nl ? l->sh.node_nl->portid : 0, pods, l->pods.n, totals);
	free(pods);
}
