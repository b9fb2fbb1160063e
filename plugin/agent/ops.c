/* The ops thread (agent/ops.h): its loop, the pods from stateDir/pods
 * (one each: opspod.c), the view it publishes (opsview.c) and shares with
 * the other threads (opsshare.c). */
#include "agent/ops.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h> // IWYU pragma: keep (SYS_*: iwyu maps it to unistd.h, which does not define them)
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/grants.h"
#include "agent/invfold.h"
#include "agent/livepolicy.h"
#include "agent/procmetrics.h"
#include "agent/opsdir.h"
#include "agent/opsflow.h"
#include "agent/opsnames.h"
#include "agent/opspod.h"
#include "agent/opsshare.h"
#include "agent/readyz.h"
#include "base/clock.h"
#include "kernel/hostside.h"
#include "kernel/netns.h"
#include "kernel/nftevents.h"
#include "state/record.h"

#define TICK_MS    1000
/* Periodic work (CHECKs, collections) per turn of the loop, at most this
 * much before the loop looks at its sockets again: a drift event waits for
 * one pod's work, never for a whole tick of every pod's (at 200 pods on a
 * loaded node that was tens of seconds). */
#define WORK_MS    20
/* At most two views a second: a burst of 100 ADDs must not cost 100
 * copies of the whole node. */
#define PUBLISH_MS 500
/* poll slots before the pods': stop, the directory, the node's events, the API's changes, the
 * conf dir (live policy) */
#define NFIXED     5

struct ng_ops {
	struct ng_ops_config cfg;
	char state_dir[4096];
	pthread_t thread;
	int stop_fd, inotify_fd, node_ev_fd;
	pid_t tid;
	struct ng_nl node_nl;
	bool node_nl_open;
	struct ng_opod_env env;   /* what each pod's work is given */
	struct ng_grants *grants; /* grants from the API, events, the condition (agent/grants.h) */
	struct ng_live *live;     /* the active entry followed onto running pods (agent/livepolicy.h) */
	ng_opod_vec pods;
	struct ng_invfold fold;
	struct ng_readyz readyz;
	struct ng_view local; /* counters that outlive pods, readiness, totals */
	size_t next_work;     /* the pod whose periodic work comes next (round robin) */
	bool dirty;
	int64_t next_tick_ms, last_publish_ms;
	uint64_t flow_hash;       /* the pod list the flow thread was told last (agent/opsflow.h) */
	struct ng_opsshare share; /* the learner's half and the last view (agent/opsshare.h) */
};

/* env.drift_seen: the pod's condition goes False before the repair. */
static void drift_seen(void *data, const struct ng_opod *p, const char *diff)
{
	ng_grants_unverified(data, p, diff);
}

/* env.learner_owns: the port ids the learner published. */
static bool learner_owns(void *data, const char *key, bool node, uint32_t portid)
{
	struct ng_ops *o = data;

	return ng_opsshare_owns(&o->share, key, node, portid);
}

/* A complete view, built outside the lock (the learner's publish must
 * never wait on it) and swapped in under it; status.json rewritten. */
static void publish_view(struct ng_ops *o)
{
	struct ng_opsview_learner l;
	struct ng_view v;

	ng_opsshare_learner(&o->share, &l);
	ng_opsview_build(&o->local, o->pods.v, o->pods.n, &l, ng_wall_ms(), &v);
	free((void *)l.pods);
	ng_opsshare_swap(&o->share, &v);
	/* This thread alone writes the view: reading it unlocked is safe. */
	ng_opsview_write_status(o->state_dir, &o->share.view);
	ng_opsflow_publish(o->cfg.flow, o->pods.v, o->pods.n, &o->flow_hash);
	o->dirty = false;
	o->last_publish_ms = ng_mono_ms();
	malloc_trim(0);
}

/* The node's event socket overran: events were lost, among them maybe a
 * deleted host-side table (every pod is CHECKed in turn, which at 200 pods
 * takes a while): the node's tables are listed once now, and a pod whose
 * host-side table is not there is CHECKed at once. */
static void node_presence(struct ng_ops *o)
{
	ng_host_tables have = {0};
	struct ng_err err = {0};

	if (!o->node_nl_open || ng_host_scan(&o->node_nl, &have, &err) < 0) {
		ng_vec_free(&have);
		return;
	}
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];
		const struct ng_record_table *t = ng_opod_enforced(p) ? ng_record_host_table(&p->d) : NULL;
		bool there = false;

		for (size_t j = 0; t && j < have.n && !there; j++)
			there = !strcmp(have.v[j].name, t->name);
		if (t && !there)
			p->check_now = true;
	}
	ng_vec_free(&have);
}

/* The node's events; on an overrun, the tables' presence (node_presence). */
static void node_events(struct ng_ops *o)
{
	uint64_t lost = o->local.events_lost;

	if (o->node_ev_fd >= 0 && ng_opod_events(o->pods.v, o->pods.n, o->node_ev_fd, true, &o->env))
		o->dirty = true;
	if (o->local.events_lost != lost)
		node_presence(o);
}

/* The node's events first, while new pods are still unknown: an ADD
 * builds a pod's host-side table before it writes the record that makes
 * the pod known here, and those events (already queued on the socket) are
 * the ADD's, not drift. */
static void scan(struct ng_ops *o)
{
	bool fresh = false;

	node_events(o);
	if (ng_opsdir_scan(&o->pods, o->state_dir))
		o->dirty = true;
	/* An ADD that committed its host-side table and wrote its final
	 * record while the directory was being read: the record was read, its
	 * table's events are still queued. Read now, they are that ADD's (its
	 * record comes after its commits), never drift; the first look (a
	 * CHECK) sees anything done to the pod since. */
	for (size_t i = 0; i < o->pods.n; i++)
		fresh |= o->pods.v[i]->fresh;
	if (fresh)
		node_events(o);
	for (size_t i = 0; i < o->pods.n; i++)
		o->pods.v[i]->fresh = false;
}

/* The namespace of an enforced pod gone (DEL may come late, or never):
 * its sockets go now. */
static void sweep_gone(struct ng_ops *o)
{
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (!p->nl_open || ng_netns_still_pods(&p->d.pod))
			continue;
		ng_opod_unwatch(p);
		o->dirty = true;
	}
}

/* What each learning pod's names taught, where the learner says it moved. */
static void collect_names(struct ng_ops *o)
{
	struct ng_opsview_learner l;

	ng_opsshare_learner(&o->share, &l);
	ng_opsnames_collect(o->pods.v, o->pods.n, l.pods, l.n, o->cfg.locks);
	free((void *)l.pods);
}

static void tick(struct ng_ops *o)
{
	int64_t now = ng_mono_ms();

	scan(o);
	sweep_gone(o);
	ng_invfold_run(&o->fold, o->state_dir, now, &o->local.inv);
	ng_readyz_eval(&o->readyz, &o->local.ready);
	ng_live_poll(o->live, false);
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (p->nl_open && now >= p->next_check_ms)
			p->check_due = true;
		if (p->nl_open && now >= p->next_collect_ms)
			p->collect_due = true;
	}
	if (o->cfg.locks)
		collect_names(o);
	o->local.scans++;
	o->dirty = true;
}

/* CHECKs a drift event asked for: at once, all of them. */
static void run_drift_checks(struct ng_ops *o)
{
	size_t done = 0;

	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (!p->check_now)
			continue;
		/* A policy change waiting goes first (a burst of CHECKs of a node's
		 * pods would hold it for seconds): the others stay marked. One
		 * CHECK a turn at least, whatever the conf dir does. */
		if (done++ && ng_live_pending(o->live))
			break;
		p->check_now = p->check_due = false;
		ng_opod_check(p, &o->env, p->vp.checked ? "drift" : "first look");
		o->dirty = true;
	}
}

/* Every pod onto the current policy generation; the view when it moved. */
static void live_run(struct ng_ops *o)
{
	if (ng_live_run(o->live, o->pods.v, o->pods.n, &o->env, &o->local))
		o->dirty = true;
	/* what the re-plans read off the pods' event sockets, reported here */
	if (ng_opod_report(o->pods.v, o->pods.n, &o->env))
		o->dirty = true;
}

/* Periodic CHECKs and collections, pod after pod from where the last turn
 * stopped, for at most WORK_MS; true when some are left. */
static bool periodic_work(struct ng_ops *o)
{
	int64_t end = ng_mono_ms() + WORK_MS;
	size_t n = o->pods.n;
	bool did = false;

	for (size_t k = 0; k < n; k++) {
		struct ng_opod *p = o->pods.v[(o->next_work + k) % n];

		if (!p->check_due && !p->collect_due)
			continue;
		/* out of time, or a policy change waiting: it goes first */
		if (ng_mono_ms() >= end || (did && ng_live_pending(o->live))) {
			o->next_work = (o->next_work + k) % n;
			return true;
		}
		if (p->check_due) {
			p->check_due = false;
			ng_opod_check(p, &o->env, p->vp.checked ? "periodic" : "first look");
		}
		if (p->collect_due) {
			p->collect_due = false;
			ng_opod_collect(p, &o->env);
		}
		o->dirty = true;
		did = true;
	}
	o->next_work = 0;
	return false;
}

static void *thread_main(void *data)
{
	struct ng_ops *o = data;
	size_t cap = 64;
	struct pollfd *fds = malloc(cap * sizeof(*fds));
	bool more;

	if (!fds)
		return NULL;
	o->tid = (pid_t)syscall(SYS_gettid);
	tick(o);
	live_run(o);
	more = periodic_work(o);
	publish_view(o);
	o->next_tick_ms = ng_mono_ms() + TICK_MS;
	for (;;) {
		size_t n = NFIXED + o->pods.n;
		int64_t now = ng_mono_ms(), wait = more ? 0 : o->next_tick_ms - now;
		bool drift_seen = false;

		/* A pending view goes out at most PUBLISH_MS after the last. */
		if (o->dirty && o->last_publish_ms + PUBLISH_MS - now < wait)
			wait = o->last_publish_ms + PUBLISH_MS - now;
		if (n > cap) {
			struct pollfd *nf = realloc(fds, n * sizeof(*fds));

			if (!nf)
				break;
			fds = nf;
			cap = n;
		}
		fds[0] = (struct pollfd){.fd = o->stop_fd, .events = POLLIN};
		fds[1] = (struct pollfd){.fd = o->inotify_fd, .events = POLLIN};
		fds[2] = (struct pollfd){.fd = o->node_ev_fd, .events = POLLIN};
		fds[3] = (struct pollfd){.fd = ng_grants_fd(o->grants), .events = POLLIN};
		fds[4] = (struct pollfd){.fd = ng_live_fd(o->live), .events = POLLIN};
		for (size_t i = 0; i < o->pods.n; i++)
			fds[NFIXED + i] = (struct pollfd){.fd = o->pods.v[i]->ev_fd, .events = POLLIN};
		if (poll(fds, n, wait > 0 ? (int)wait : 0) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents) {
			if (ng_opsdir_forget_deleted(&o->pods, o->inotify_fd, o->state_dir))
				o->dirty = true;
			scan(o);
		}
		if (fds[2].revents)
			node_events(o);
		/* Pods may have been dropped by scan(): look fds up, never index. */
		for (size_t i = NFIXED; i < n; i++)
			if (fds[i].revents && fds[i].fd >= 0 &&
			    ng_opod_events(o->pods.v, o->pods.n, fds[i].fd, false, &o->env))
				o->dirty = true;
		/* Live policy before the CHECKs (they compare with what it
		 * applies), and the conf dir's events before the pods: a record
		 * an ADD wrote after the runtime read a new file is planned from
		 * that file. */
		ng_live_poll(o->live, true);
		live_run(o);
		for (size_t i = 0; i < o->pods.n; i++)
			drift_seen |= o->pods.v[i]->check_now;
		if (drift_seen)
			run_drift_checks(o);
		if (ng_mono_ms() >= o->next_tick_ms) {
			tick(o);
			o->next_tick_ms = ng_mono_ms() + TICK_MS;
		}
		more = periodic_work(o);
		ng_grants_run(o->grants, o->pods.v, o->pods.n, &o->env);
		if (o->dirty && ng_mono_ms() - o->last_publish_ms >= PUBLISH_MS)
			publish_view(o);
	}
	free(fds);
	return NULL;
}

int ng_ops_start(const struct ng_ops_config *c, struct ng_ops **out, struct ng_err *err)
{
	struct ng_ops *o = calloc(1, sizeof(*o));
	char dir[4200];

	if (!o)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	o->cfg = *c;
	if (o->cfg.check_ms <= 0)
		o->cfg.check_ms = NG_OPS_CHECK_MS;
	snprintf(o->state_dir, sizeof(o->state_dir), "%s", c->state_dir);
	snprintf(o->readyz.bin_dir, sizeof(o->readyz.bin_dir), "%s", c->bin_dir);
	snprintf(o->readyz.conf_dir, sizeof(o->readyz.conf_dir), "%s", c->conf_dir);
	o->local.start_ms = ng_wall_ms();
	o->local.repair = c->repair;
	o->local.pod_metrics_limit = c->pod_metrics_limit;
	ng_invfold_init(&o->fold);
	ng_opsshare_init(&o->share);
	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, o->state_dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(o);
		return ng_fail(err, NG_E_INTERNAL, "%s: %s", dir, strerror(errno));
	}
	o->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	o->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (o->stop_fd < 0 || o->inotify_fd < 0 ||
	    inotify_add_watch(o->inotify_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM) <
		    0) {
		ng_fail(err, NG_E_INTERNAL, "ops thread setup: %s", strerror(errno));
		goto fail;
	}
	o->node_ev_fd = ng_nft_events_open(-1, err);
	if (o->node_ev_fd < 0)
		goto fail;
	o->node_nl_open = ng_nl_open(&o->node_nl, err) == 0;
	o->env = (struct ng_opod_env){.state_dir = o->state_dir,
				      .locks = c->locks,
				      .node_nl = o->node_nl_open ? &o->node_nl : NULL,
				      .repair = o->cfg.repair,
				      .check_ms = o->cfg.check_ms,
				      .learner_owns = learner_owns,
				      .learner_data = o,
				      .local = &o->local};
	o->live = ng_live_new(c->conf_dir, o->state_dir);
	o->env.self_node = ng_live_self(o->live, &o->env.n_self_node);
	if (!o->live || (c->kube && !(o->grants = ng_grants_new(c->kube)))) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		goto fail;
	}
	o->env.drift_seen = drift_seen;
	o->env.drift_data = o->grants;
	if (pthread_create(&o->thread, NULL, thread_main, o) != 0) {
		ng_fail(err, NG_E_INTERNAL, "cannot start the ops thread");
		goto fail;
	}
	*out = o;
	return 0;
fail:
	ng_grants_free(o->grants);
	ng_live_free(o->live);
	if (o->node_nl_open)
		ng_nl_close(&o->node_nl);
	if (o->node_ev_fd > 0)
		close(o->node_ev_fd);
	if (o->stop_fd >= 0)
		close(o->stop_fd);
	if (o->inotify_fd >= 0)
		close(o->inotify_fd);
	free(o);
	return -1;
}

void ng_ops_stop(struct ng_ops *o)
{
	uint64_t one = 1;

	if (!o)
		return;
	if (write(o->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(o->thread, NULL);
	while (o->pods.n)
		ng_opsdir_drop(&o->pods, o->pods.n - 1, "agent stopping");
	ng_vec_free(&o->pods);
	ng_grants_free(o->grants);
	ng_live_free(o->live);
	ng_invfold_close(&o->fold);
	if (o->node_nl_open)
		ng_nl_close(&o->node_nl);
	close(o->node_ev_fd);
	close(o->stop_fd);
	close(o->inotify_fd);
	ng_opsshare_free(&o->share);
	free(o);
}

void ng_ops_publish(struct ng_ops *o, bool serving, uint32_t node_portid, const struct ng_ops_agent_pod *pods,
		    size_t n, const uint64_t totals[NG_AC_COUNT])
{
	ng_opsshare_publish(&o->share, serving, node_portid, pods, n, totals);
}

uint64_t ng_ops_metrics(struct ng_ops *o, FILE *out)
{
	uint64_t gen = ng_opsshare_metrics(&o->share, out);

	ng_procmetrics_render(out);
	/* The API's and grants' own counters (a body is re-rendered with
	 * each view: at most a second behind). */
	if (o->cfg.kube) {
		ng_kube_metrics(o->cfg.kube, out);
		ng_grants_metrics(o->grants, out);
	}
	return gen;
}

json_t *ng_ops_names(void *data, const struct ng_flow_filter *f)
{
	struct ng_ops *o = data;

	return ng_opsshare_names(&o->share, f->pod ? f->ns : NULL, f->pod ? f->name : NULL);
}

uint64_t ng_ops_view_gen(struct ng_ops *o)
{
	return ng_opsshare_gen(&o->share);
}

bool ng_ops_readyz(struct ng_ops *o, FILE *out)
{
	struct ng_ready r = ng_opsshare_ready(&o->share);
	bool ok;

	snprintf(r.serving_msg, sizeof(r.serving_msg), "%s",
		 r.serving ? "the agent serves every recorded pod"
			   : "the agent has not picked up every recorded pod yet");
	/* Both lines always: the kube line says why when the watch is stale. */
	ok = ng_readyz_render(&r, out);
	if (o->cfg.kube && !ng_kube_readyz(o->cfg.kube, out))
		ok = false;
	return ok;
}
