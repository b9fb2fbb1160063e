/* The ops thread (agent/ops.h): its loop, the pods from stateDir/decisions,
 * the view (opsview.c). */
#include "agent/ops.h"
#include "base/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "kernel/nftevents.h"
#include "agent/metrics.h"
#include "agent/ops_int.h"
#include "kernel/netns.h"

#define TICK_MS    1000
/* At most two views a second: a burst of 100 ADDs must not cost 100
 * copies of the whole node. */
#define PUBLISH_MS 500

void ng_ops_log(const char *level, const char *event, const struct ng_opod *p, const char *fmt, ...)
{
	char msg[1024], pod[520];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* The learner's shape: "pod" is namespace/name, "record" the key. */
	if (p)
		ng_podref_name(&p->d.pod, pod, sizeof(pod));
	ng_alog_line(level, event, p ? pod : NULL, p ? p->d.key : NULL, msg);
}

static struct ng_opod *find(struct ng_ops *o, const char *key, bool refused)
{
	for (size_t i = 0; i < o->pods.n; i++)
		if (!strcmp(o->pods.v[i]->d.key, key) && o->pods.v[i]->d.refused_file == refused)
			return o->pods.v[i];
	return NULL;
}

static void drop(struct ng_ops *o, size_t i, const char *why)
{
	struct ng_opod *p = o->pods.v[i];

	if (!strcmp(p->d.decision, "enforced"))
		ng_ops_log("info", "pod_unwatched", p, "%s", why);
	o->pods.v[i] = o->pods.v[--o->pods.n];
	ng_opod_free(p);
	o->dirty = true;
}

/* A refused record goes once a later ADD of the same pod decided, or
 * after NG_REFUSED_KEEP_S. */
static bool refused_stale(struct ng_ops *o, const struct ng_opod *p, int64_t now)
{
	if (!p->d.refused_file)
		return false;
	if (now - p->d.at_ms > (int64_t)NG_REFUSED_KEEP_S * 1000)
		return true;
	for (size_t i = 0; i < o->pods.n; i++) {
		const struct ng_record *d = &o->pods.v[i]->d;

		if (!d->refused_file && d->pod.name[0] && !strcmp(d->pod.ns, p->d.pod.ns) &&
		    !strcmp(d->pod.name, p->d.pod.name) && d->at_ms >= p->d.at_ms)
			return true;
	}
	return false;
}

/* Reads the directory's events. A pod whose decision record was removed
 * (DEL removes it before the tables) is dropped at once: scan() reads the
 * node's events before anything else, and DEL's own deletion of the
 * host-side table must not count as drift (nor be repaired). */
static void forget_deleted(struct ng_ops *o)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(o->inotify_fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
			char key[256];
			bool refused;

			off += (ssize_t)(sizeof(*ev) + ev->len);
			if (!(ev->mask & (IN_DELETE | IN_MOVED_FROM)) || ev->len == 0 ||
			    !ng_record_name(ev->name, key, sizeof(key), &refused))
				continue;
			for (size_t i = 0; i < o->pods.n; i++)
				if (!strcmp(o->pods.v[i]->d.key, key) &&
				    o->pods.v[i]->d.refused_file == refused) {
					drop(o, i, "its decision record is gone (DEL)");
					break;
				}
		}
	}
}

static void scan(struct ng_ops *o)
{
	char dir[4200], path[4600], key[256];
	int64_t now = ng_wall_ms();
	struct dirent *e;
	DIR *d;

	/* The node's events first, while new pods are still unknown: an ADD
	 * builds a pod's host-side table before it writes the decision record
	 * that makes the pod known here, and those events (already queued on
	 * the socket) are the ADD's, not drift. */
	if (o->node_ev_fd >= 0)
		ng_opod_events(o, o->node_ev_fd, true);
	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, o->state_dir);
	d = opendir(dir);
	for (size_t i = 0; i < o->pods.n; i++)
		o->pods.v[i]->seen = false;
	while (d && (e = readdir(d))) {
		struct ng_opod *p;
		struct stat st;
		bool refused;

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		p = find(o, key, refused);
		if (p && p->file_ino == (uint64_t)st.st_ino) {
			p->seen = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (p) { /* rewritten: a retried ADD */
			for (size_t i = 0; i < o->pods.n; i++)
				if (o->pods.v[i] == p)
					drop(o, i, "its decision was rewritten");
		}
		p = ng_opod_load(o, path, (uint64_t)st.st_ino);
		if (p && ng_vec_push(&o->pods, &p) < 0) // NOLINT(bugprone-sizeof-expression)
			ng_opod_free(p);
		else if (p && !strcmp(p->d.decision, "enforced"))
			ng_ops_log("info", "pod_watched", p, "drift watch and metrics for %s", p->d.key);
		o->dirty = true;
	}
	if (d)
		closedir(d);
	for (size_t i = o->pods.n; i-- > 0;) {
		struct ng_opod *p = o->pods.v[i];

		if (!p->seen) {
			drop(o, i, "its decision record is gone (DEL)");
		} else if (refused_stale(o, p, now)) {
			snprintf(path, sizeof(path), "%s/%s" NG_REFUSED_SUFFIX, dir, p->d.key);
			unlink(path);
			drop(o, i, "refused record aged out");
		}
	}
}

/* The namespace of an enforced pod gone (DEL may come late, or never):
 * its sockets go now. */
static void sweep_gone(struct ng_ops *o)
{
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];
		if (!p->nl_open || ng_netns_still_pods(&p->d.pod))
			continue;
		ng_ops_log("info", "pod_unwatched", p, "its network namespace is gone");
		ng_nl_close(&p->nl);
		p->nl_open = false;
		if (p->ev_fd >= 0)
			close(p->ev_fd);
		p->ev_fd = -1;
		snprintf(p->vp.read_error, sizeof(p->vp.read_error), "the pod's network namespace is gone");
		p->vp.read_ok = false;
		o->dirty = true;
	}
}

static void tick(struct ng_ops *o)
{
	int64_t now = ng_mono_ms();

	scan(o);
	sweep_gone(o);
	ng_invfold_run(&o->fold, o->state_dir, now, &o->local.inv);
	ng_readyz_eval(&o->readyz, &o->local.ready);
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (p->nl_open && now >= p->next_check_ms)
			p->check_now = true;
		if (p->nl_open && now >= p->next_collect_ms)
			ng_opod_collect(o, p);
	}
	o->local.scans++;
	o->dirty = true;
}

static void run_checks(struct ng_ops *o, const char *why)
{
	for (size_t i = 0; i < o->pods.n; i++) {
		struct ng_opod *p = o->pods.v[i];

		if (!p->check_now)
			continue;
		p->check_now = false;
		ng_opod_check(o, p, p->vp.checked ? why : "first look");
	}
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
	ng_ops_publish_view(o);
	o->next_tick_ms = ng_mono_ms() + TICK_MS;
	for (;;) {
		size_t n = 3 + o->pods.n;
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
		for (size_t i = 0; i < o->pods.n; i++)
			fds[3 + i] = (struct pollfd){.fd = o->pods.v[i]->ev_fd, .events = POLLIN};
		if (poll(fds, n, wait > 0 ? (int)wait : 0) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents) {
			forget_deleted(o);
			scan(o);
		}
		if (fds[2].revents)
			ng_opod_events(o, o->node_ev_fd, true);
		/* Pods may have been dropped by scan(): look fds up, never index. */
		for (size_t i = 3; i < n; i++)
			if (fds[i].revents && fds[i].fd >= 0)
				ng_opod_events(o, fds[i].fd, false);
		for (size_t i = 0; i < o->pods.n; i++)
			drift_seen |= o->pods.v[i]->check_now;
		if (drift_seen)
			run_checks(o, "drift");
		if (ng_mono_ms() >= o->next_tick_ms) {
			tick(o);
			run_checks(o, "periodic");
			o->next_tick_ms = ng_mono_ms() + TICK_MS;
		}
		if (o->dirty && ng_mono_ms() - o->last_publish_ms >= PUBLISH_MS)
			ng_ops_publish_view(o);
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
	ng_invfold_init(&o->fold);
	pthread_mutex_init(&o->mu, NULL);
	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, o->state_dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(o);
		return ng_fail(err, NG_E_INTERNAL, "%s: %s", dir, strerror(errno));
	}
	o->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	o->relearn_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	o->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (o->stop_fd < 0 || o->relearn_fd < 0 || o->inotify_fd < 0 ||
	    inotify_add_watch(o->inotify_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM) <
		    0) {
		ng_fail(err, NG_E_INTERNAL, "ops thread setup: %s", strerror(errno));
		goto fail;
	}
	o->node_ev_fd = ng_nft_events_open(-1, err);
	if (o->node_ev_fd < 0)
		goto fail;
	o->node_nl_open = ng_nl_open(&o->node_nl, err) == 0;
	if (pthread_create(&o->thread, NULL, thread_main, o) != 0) {
		ng_fail(err, NG_E_INTERNAL, "cannot start the ops thread");
		goto fail;
	}
	*out = o;
	return 0;
fail:
	if (o->node_nl_open)
		ng_nl_close(&o->node_nl);
	if (o->node_ev_fd > 0)
		close(o->node_ev_fd);
	if (o->stop_fd >= 0)
		close(o->stop_fd);
	if (o->relearn_fd >= 0)
		close(o->relearn_fd);
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
		drop(o, o->pods.n - 1, "agent stopping");
	ng_vec_free(&o->pods);
	ng_invfold_close(&o->fold);
	if (o->node_nl_open)
		ng_nl_close(&o->node_nl);
	close(o->node_ev_fd);
	close(o->stop_fd);
	close(o->relearn_fd);
	close(o->inotify_fd);
	ng_view_free(&o->shared);
	ng_vec_free(&o->agent_pods);
	for (size_t i = 0; i < o->relearn.n; i++)
		free(o->relearn.v[i]);
	ng_vec_free(&o->relearn);
	pthread_mutex_destroy(&o->mu);
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

void ng_ops_metrics(struct ng_ops *o, FILE *out)
{
	pthread_mutex_lock(&o->mu);
	ng_metrics_render(&o->shared, out);
	pthread_mutex_unlock(&o->mu);
}

bool ng_ops_readyz(struct ng_ops *o, FILE *out)
{
	struct ng_ready r;

	pthread_mutex_lock(&o->mu);
	r = o->shared.ready;
	/* The agent's own state as of now, not as of the last view. */
	r.serving = o->agent_serving;
	pthread_mutex_unlock(&o->mu);
	snprintf(r.serving_msg, sizeof(r.serving_msg), "%s",
		 r.serving ? "the agent serves every recorded pod"
			   : "the agent has not picked up every recorded pod yet");
	return ng_readyz_render(&r, out);
}

int ng_ops_relearn_fd(const struct ng_ops *o)
{
	return o->relearn_fd;
}

size_t ng_ops_take_relearn(struct ng_ops *o, char (*keys)[256], size_t max)
{
	uint64_t v;
	size_t n = 0;

	if (read(o->relearn_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing counted, the list may still hold keys */
	}
	pthread_mutex_lock(&o->mu);
	while (o->relearn.n && n < max) {
		char *k = o->relearn.v[--o->relearn.n];

		snprintf(keys[n++], 256, "%s", k);
		free(k);
	}
	pthread_mutex_unlock(&o->mu);
	return n;
}
