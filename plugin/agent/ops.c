/* The ops thread (agent/ops.h): its loop, the pods from stateDir/pods
 * (one each: opspod.c), the view it publishes (opsview.c). */
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
#include "agent/metrics.h"
#include "agent/procmetrics.h"
#include "agent/opsdir.h"
#include "agent/opsflow.h"
#include "agent/opsnames.h"
#include "agent/opspod.h"
#include "agent/readyz.h"
#include "base/clock.h"
#include "kernel/netns.h"
#include "kernel/nftevents.h"
#include "node/statusnames.h"
#include "state/record.h"

#define TICK_MS    1000
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
	bool dirty;
	int64_t next_tick_ms, last_publish_ms;
	uint64_t flow_hash; /* the pod list the flow thread was told last (agent/opsflow.h) */

	/* The last complete view (/metrics, /readyz), under its own lock: the
	 * HTTP thread renders from it while holding view_mu, and only this
	 * thread's swap of a new view ever waits for that, never the learner
	 * (whose publish takes `mu`). view_gen counts the swaps. */
	pthread_mutex_t view_mu;
	struct ng_view shared;
	uint64_t view_gen;

	/* Nothing below is touched by either thread but under `mu`. */
	pthread_mutex_t mu;
	bool agent_serving;
	uint32_t agent_node_portid;
	NG_VEC(struct ng_ops_agent_pod) agent_pods;
	uint64_t agent_totals[NG_AC_COUNT];
	bool agent_published;
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
	bool own = false;

	pthread_mutex_lock(&o->mu);
	if (node)
		own = portid == o->agent_node_portid;
	else
		for (size_t i = 0; i < o->agent_pods.n && !own; i++)
			own = o->agent_pods.v[i].portid == portid && !strcmp(o->agent_pods.v[i].key, key);
	pthread_mutex_unlock(&o->mu);
	return own;
}

/* A complete view, built outside the lock (the learner's publish must
 * never wait on it) and swapped in under it; status.json rewritten. */
static void publish_view(struct ng_ops *o)
{
	struct ng_opsview_learner l = {0};
	struct ng_ops_agent_pod *pods = NULL;
	struct ng_view v, old;

	pthread_mutex_lock(&o->mu);
	l.published = o->agent_published;
	l.serving = o->agent_serving;
	memcpy(l.totals, o->agent_totals, sizeof(l.totals));
	if (o->agent_pods.n && (pods = malloc(o->agent_pods.n * sizeof(*pods)))) {
		memcpy(pods, o->agent_pods.v, o->agent_pods.n * sizeof(*pods));
		l.n = o->agent_pods.n;
	}
	pthread_mutex_unlock(&o->mu);
	l.pods = pods;
	ng_opsview_build(&o->local, o->pods.v, o->pods.n, &l, ng_wall_ms(), &v);
	free(pods);
	pthread_mutex_lock(&o->view_mu);
	old = o->shared;
	o->shared = v;
	o->view_gen++;
	pthread_mutex_unlock(&o->view_mu);
	ng_view_free(&old);
	/* This thread alone writes o->shared: reading it unlocked is safe. */
	ng_opsview_write_status(o->state_dir, &o->shared);
	ng_opsflow_publish(o->cfg.flow, o->pods.v, o->pods.n, &o->flow_hash);
	o->dirty = false;
	o->last_publish_ms = ng_mono_ms();
	malloc_trim(0);
}

/* The node's events first, while new pods are still unknown: an ADD
 * builds a pod's host-side table before it writes the record that makes
 * the pod known here, and those events (already queued on the socket) are
 * the ADD's, not drift. */
static void scan(struct ng_ops *o)
{
	if (o->node_ev_fd >= 0 && ng_opod_events(o->pods.v, o->pods.n, o->node_ev_fd, true, &o->env))
		o->dirty = true;
	if (ng_opsdir_scan(&o->pods, o->state_dir))
		o->dirty = true;
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
	struct ng_ops_agent_pod *agent = NULL;
	size_t n = 0;

	pthread_mutex_lock(&o->mu);
	if (o->agent_pods.n && (agent = malloc(o->agent_pods.n * sizeof(*agent)))) {
		memcpy(agent, o->agent_pods.v, o->agent_pods.n * sizeof(*agent));
		n = o->agent_pods.n;
	}
	pthread_mutex_unlock(&o->mu);
	ng_opsnames_collect(o->pods.v, o->pods.n, agent, n, o->cfg.locks);
	free(agent);
}

static void tick(struct ng_ops *o)
{
	int64_t now = ng_mono_ms();
	size_t collected = 0;

	scan(o);
	sweep_gone(o);
	ng_invfold_run(&o->fold, o->state_dir, now, &o->local.inv);
	ng_readyz_eval(&o->readyz, &o->local.ready);
	ng_live_poll(o->live, false);
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (p->nl_open && now >= p->next_check_ms)
			p->check_now = true;
		/* (a policy change waiting is seen first: the rest next tick) */
		if (p->nl_open && now >= p->next_collect_ms && !(collected && ng_live_pending(o->live))) {
			ng_opod_collect(p, &o->env);
			collected++;
		}
	}
	if (o->cfg.locks)
		collect_names(o);
	o->local.scans++;
	o->dirty = true;
}

static void run_checks(struct ng_ops *o, const char *why)
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
		p->check_now = false;
		ng_opod_check(p, &o->env, p->vp.checked ? why : "first look");
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

static void *thread_main(void *data)
{
	struct ng_ops *o = data;
	size_t cap = 64;
	struct pollfd *fds = malloc(cap * sizeof(*fds));

	if (!fds)
		return NULL;
	o->tid = (pid_t)syscall(SYS_gettid);
	tick(o);
	run_checks(o, "periodic");
	live_run(o);
	publish_view(o);
	o->next_tick_ms = ng_mono_ms() + TICK_MS;
	for (;;) {
		size_t n = NFIXED + o->pods.n;
		int64_t now = ng_mono_ms(), wait = o->next_tick_ms - now;
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
		if (fds[2].revents && ng_opod_events(o->pods.v, o->pods.n, o->node_ev_fd, true, &o->env))
			o->dirty = true;
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
			run_checks(o, "drift");
		if (ng_mono_ms() >= o->next_tick_ms) {
			tick(o);
			run_checks(o, "periodic");
			o->next_tick_ms = ng_mono_ms() + TICK_MS;
		}
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
	pthread_mutex_init(&o->mu, NULL);
	pthread_mutex_init(&o->view_mu, NULL);
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
	ng_view_free(&o->shared);
	ng_vec_free(&o->agent_pods);
	pthread_mutex_destroy(&o->mu);
	pthread_mutex_destroy(&o->view_mu);
	free(o);
}

void ng_ops_publish(struct ng_ops *o, bool serving, uint32_t node_portid, const struct ng_ops_agent_pod *pods,
		    size_t n, const uint64_t totals[NG_AC_COUNT])
{
	pthread_mutex_lock(&o->mu);
	o->agent_serving = serving;
	o->agent_node_portid = node_portid;
	o->agent_pods.n = 0;
	for (size_t i = 0; i < n; i++)
		if (ng_vec_push(&o->agent_pods, &pods[i]) < 0)
			break;
	memcpy(o->agent_totals, totals, sizeof(o->agent_totals));
	o->agent_published = true;
	pthread_mutex_unlock(&o->mu);
}

uint64_t ng_ops_metrics(struct ng_ops *o, FILE *out)
{
	uint64_t gen;

	pthread_mutex_lock(&o->view_mu);
	ng_metrics_render(&o->shared, out);
	gen = o->view_gen;
	pthread_mutex_unlock(&o->view_mu);
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
	json_t *doc;

	pthread_mutex_lock(&o->view_mu);
	doc = ng_status_names_json(&o->shared, f->pod ? f->ns : NULL, f->pod ? f->name : NULL);
	pthread_mutex_unlock(&o->view_mu);
	return doc;
}

uint64_t ng_ops_view_gen(struct ng_ops *o)
{
	uint64_t gen;

	pthread_mutex_lock(&o->view_mu);
	gen = o->view_gen;
	pthread_mutex_unlock(&o->view_mu);
	return gen;
}

bool ng_ops_readyz(struct ng_ops *o, FILE *out)
{
	struct ng_ready r;

	pthread_mutex_lock(&o->view_mu);
	r = o->shared.ready;
	pthread_mutex_unlock(&o->view_mu);
	/* The agent's own state as of now, not as of the last view. */
	pthread_mutex_lock(&o->mu);
	r.serving = o->agent_serving;
	pthread_mutex_unlock(&o->mu);
	snprintf(r.serving_msg, sizeof(r.serving_msg), "%s",
		 r.serving ? "the agent serves every recorded pod"
			   : "the agent has not picked up every recorded pod yet");
	/* Both lines always: the kube line says why when the watch is stale. */
	bool ok = ng_readyz_render(&r, out);

	if (o->cfg.kube && !ng_kube_readyz(o->cfg.kube, out))
		ok = false;
	return ok;
}
