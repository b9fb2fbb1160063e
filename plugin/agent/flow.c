/* The flow thread. See flow.h. */
#include "agent/flow.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h> // IWYU pragma: keep (SYS_gettid)
#include <unistd.h>

#include "agent/alog.h"
#include "agent/flowq.h"
#include "agent/flowserve.h"
#include "agent/flowring.h"
#include "base/clock.h"
#include "base/decision_log.h"
#include "base/vec.h"
#include "kernel/netns.h"
#include "kernel/unixsock.h"

#define TICK_MS  1000
#define RETRY_MS 5000 /* a pod whose group could not be bound is tried again */

enum { TAG_STOP = 1, TAG_PODS, TAG_QUEUE, TAG_LISTEN, TAG_NODE, TAG_POD, TAG_CLIENT };

struct flow_pod {
	int tag; /* TAG_POD: first, for the epoll */
	struct ng_flow_pod info;
	struct ng_flowsrc src;
	bool open, seen;
	bool shared;   /* another attachment of the pod reads its namespace (Multus) */
	char why[256]; /* why it is not open ("": it is) */
	int64_t retry_ms;
};

struct ng_flow {
	char sock_path[4200];
	pthread_t thread;
	int epfd, stop_fd, pods_fd;
	int tag_stop, tag_pods, tag_queue, tag_listen, tag_node;

	pthread_mutex_t mu; /* pending and have_pending only */
	NG_VEC(struct ng_flow_pod) pending;
	bool have_pending;

	struct ng_flowq q;
	struct ng_flowring ring;
	NG_VEC(struct flow_pod *) pods;
	struct ng_flownode node;
	struct ng_flowserve serve; /* the socket's clients (agent/flowserve.h) */
	int64_t next_tick_ms;
};

/* ---- events into the ring ---------------------------------------------------- */

static void emit(const struct ng_flow_ev *ev, const struct ng_nflog_record *r, void *data)
{
	struct ng_flow *f = data;

	(void)r;
	ng_flowring_push(&f->ring, ev);
}

/* A pod's reading could not start (or stopped): in the ring, and the
 * agent's log, once per reason. */
static void unwatched(struct ng_flow *f, struct flow_pod *p, const char *why)
{
	struct ng_flow_ev ev;
	char pod[600];

	if (!strcmp(p->why, why))
		return;
	snprintf(p->why, sizeof(p->why), "%s", why);
	ng_flowev_note(&ev, NG_FLOW_UNWATCHED, p->info.pod.ns, p->info.pod.name, NG_LOG_POD, 0, why,
		       ng_wall_ms());
	ng_flowring_push(&f->ring, &ev);
	snprintf(pod, sizeof(pod), "%s/%s", p->info.pod.ns, p->info.pod.name);
	/* A namespace that went is the pod's end, not a fault. */
	ng_alog(strstr(why, "namespace is gone") ? "info" : "warning", "flow_unwatched", pod, p->info.key,
		"its refusals are not in the flow log: %s", why);
}

/* ---- pods -------------------------------------------------------------------- */

static void pod_close(struct ng_flow *f, struct flow_pod *p)
{
	if (p->open) {
		epoll_ctl(f->epfd, EPOLL_CTL_DEL, ng_flowsrc_fd(&p->src), NULL);
		ng_flowsrc_close(&p->src);
	}
	p->open = false;
}

static void pod_free(struct ng_flow *f, struct flow_pod *p)
{
	pod_close(f, p);
	ng_flow_pod_free(&p->info);
	free(p);
}

/* An open pod reading the same namespace: a second attachment's. */
static const struct flow_pod *same_netns(const struct ng_flow *f, const struct flow_pod *p)
{
	for (size_t i = 0; p->info.pod.netns_ino && i < f->pods.n; i++) {
		const struct flow_pod *o = f->pods.v[i];

		if (o != p && o->open && o->info.pod.netns_ino == p->info.pod.netns_ino &&
		    o->info.pod.netns_dev == p->info.pod.netns_dev && o->info.group == p->info.group)
			return o;
	}
	return NULL;
}

static void pod_open(struct ng_flow *f, struct flow_pod *p, int64_t now)
{
	struct ng_err err = {0};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &p->tag};

	p->retry_ms = now + RETRY_MS;
	p->shared = false;
	if (!p->info.nflog) {
		unwatched(f, p, "its tables log nothing (\"log\": false)");
		return;
	}
	/* One group per namespace, one reader: the other attachment's reads
	 * this one's tables too (the same pod). */
	if (same_netns(f, p)) {
		p->shared = true;
		p->why[0] = '\0';
		return;
	}
	if (ng_flowsrc_open(&p->src, &p->info, -1, &err) < 0) {
		unwatched(f, p, err.msg);
		return;
	}
	p->open = true;
	if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, ng_flowsrc_fd(&p->src), &ev) < 0) {
		pod_close(f, p);
		unwatched(f, p, "epoll: out of room");
		return;
	}
	p->why[0] = '\0';
	if (p->info.host && f->node.open && ng_flownode_bind(&f->node, p->info.group, &err) < 0)
		ng_alog("error", "flow_node", NULL, NULL, "the node side's refusals: %s", err.msg);
}

static struct flow_pod *find_key(struct ng_flow *f, const char *key)
{
	for (size_t i = 0; i < f->pods.n; i++)
		if (!strcmp(f->pods.v[i]->info.key, key))
			return f->pods.v[i];
	return NULL;
}

/* The ops thread's latest list: pods gone closed, new ones opened,
 * changed ones (another namespace, group, tables) opened again. */
static void reconcile(struct ng_flow *f)
{
	struct ng_flow_pod *list = NULL;
	size_t n = 0;
	int64_t now = ng_mono_ms();
	bool have;

	pthread_mutex_lock(&f->mu);
	have = f->have_pending;
	if (have) {
		/* An empty list is a list: every pod gone (its array is NULL). */
		list = f->pending.v;
		n = f->pending.n;
		memset(&f->pending, 0, sizeof(f->pending));
		f->have_pending = false;
	}
	pthread_mutex_unlock(&f->mu);
	if (!have)
		return;
	for (size_t i = 0; i < f->pods.n; i++)
		f->pods.v[i]->seen = false;
	for (size_t i = 0; i < n; i++) {
		struct flow_pod *p = find_key(f, list[i].key);

		if (p && ng_flow_pod_same(&p->info, &list[i])) {
			p->seen = true;
			continue;
		}
		if (p) {
			pod_close(f, p);
			ng_flow_pod_free(&p->info);
			p->why[0] = '\0';
		} else if (!(p = calloc(1, sizeof(*p))) ||
			   ng_vec_push(&f->pods, &p) < 0) { // NOLINT(bugprone-sizeof-expression)
			free(p);
			continue;
		}
		p->tag = TAG_POD;
		p->seen = true;
		if (ng_flow_pod_copy(&p->info, &list[i]) < 0) {
			memset(&p->info, 0, sizeof(p->info));
			p->seen = false;
			continue;
		}
		pod_open(f, p, now);
	}
	for (size_t i = f->pods.n; i-- > 0;)
		if (!f->pods.v[i]->seen) {
			pod_free(f, f->pods.v[i]);
			f->pods.v[i] = f->pods.v[--f->pods.n];
		}
	for (size_t i = 0; i < n; i++)
		ng_flow_pod_free(&list[i]);
	free(list);
}

static struct ng_flowsrc *find_peer(void *data, uint32_t ifindex)
{
	struct ng_flow *f = data;

	for (size_t i = 0; ifindex && i < f->pods.n; i++)
		if (f->pods.v[i]->open && f->pods.v[i]->info.host &&
		    f->pods.v[i]->info.host_ifindex == ifindex)
			return &f->pods.v[i]->src;
	return NULL;
}

static void tick(struct ng_flow *f)
{
	int64_t now = ng_mono_ms();

	for (size_t i = 0; i < f->pods.n; i++) {
		struct flow_pod *p = f->pods.v[i];

		/* Its namespace gone (DEL may come late, or never): its sockets
		 * go now, not when the ops thread's next view says so. */
		if (p->open && !ng_netns_still_pods(&p->info.pod)) {
			pod_close(f, p);
			unwatched(f, p, "its network namespace is gone");
		}
		if (p->open)
			ng_flowsrc_skipped(&p->src, f->node.nl_open ? &f->node.nl : NULL, now, false, emit,
					   f);
		else if (p->info.nflog && now >= p->retry_ms && !(p->shared && same_netns(f, p)))
			pod_open(f, p, now);
	}
	ng_flowq_drain(&f->q, &f->ring);
	f->next_tick_ms = now + TICK_MS;
}

/* The first line of an observe answer: what the stream covers. */
static char *start_line(void *data)
{
	struct ng_flow *f = data;
	json_t *o = json_object(), *un = json_array();
	const struct ng_flow_ev *old = ng_flowring_get(&f->ring, ng_flowring_oldest(&f->ring));
	size_t watched = 0;
	char ts[64], *s;

	ng_utc_now(ts, sizeof(ts));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "event", json_string("start"));
	for (size_t i = 0; i < f->pods.n; i++) {
		const struct flow_pod *p = f->pods.v[i];

		watched += p->open || p->shared;
		if (!p->open && !p->shared && json_array_size(un) < 32)
			json_array_append_new(un, json_pack("{s:s,s:s,s:s}", "pod_namespace", p->info.pod.ns,
							    "pod_name", p->info.pod.name, "why", p->why));
	}
	json_object_set_new(o, "pods", json_integer((json_int_t)f->pods.n));
	json_object_set_new(o, "watched", json_integer((json_int_t)watched));
	json_object_set_new(o, "unwatched", un);
	json_object_set_new(o, "ring", json_integer(NG_FLOW_RING));
	if (old) {
		ng_utc_format((time_t)(old->ts_ms / 1000), (long)(old->ts_ms % 1000), ts, sizeof(ts));
		json_object_set_new(o, "oldest", json_string(ts));
	}
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* ---- the thread ------------------------------------------------------------------ */

static void *thread_main(void *data)
{
	struct ng_flow *f = data;
	struct epoll_event evs[64];
	struct ng_err err = {0};

	/* Below the learner's loop: under contention for the CPU (a pod
	 * logging at a high log.ratePerSecond), answers first; what this
	 * thread cannot read in time the kernel drops, and the stream says so. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) < 0) {
		/* not allowed: the per-turn bounds still hold */
	}
	f->next_tick_ms = ng_mono_ms() + TICK_MS;
	for (;;) {
		int64_t wait = f->next_tick_ms - ng_mono_ms();
		int n = epoll_wait(f->epfd, evs, 64, wait > 0 ? (int)wait : 0);
		bool again = false;

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n && !again; i++) {
			int *tag = evs[i].data.ptr;
			uint64_t one;

			switch (*tag) {
			case TAG_STOP: return NULL;
			case TAG_PODS:
				if (read(f->pods_fd, &one, sizeof(one)) < 0) {
				}
				reconcile(f);
				/* Pods freed: later events of this batch may name them. */
				again = true;
				break;
			case TAG_QUEUE: ng_flowq_drain(&f->q, &f->ring); break;
			case TAG_LISTEN: ng_flowserve_accept(&f->serve); break;
			case TAG_NODE:
				ng_flownode_read(&f->node, NG_FLOW_READ, find_peer, f, emit, f, &err);
				break;
			case TAG_POD: {
				struct flow_pod *p = (struct flow_pod *)(void *)tag;

				if (ng_flowsrc_read(&p->src, NG_FLOW_READ, emit, f, &err) < 0) {
					pod_close(f, p);
					unwatched(f, p, err.msg);
				}
				break;
			}
			case TAG_CLIENT: {
				struct ng_flowclient *c = (struct ng_flowclient *)(void *)tag;

				if (!ng_flowserve_event(&f->serve, c, evs[i].events, &f->ring, start_line,
							f)) {
					ng_flowserve_drop(&f->serve, c);
					/* freed: later events of this batch may name it */
					again = true;
				}
				break;
			}
			default: break;
			}
		}
		if (ng_mono_ms() >= f->next_tick_ms)
			tick(f);
		ng_flowserve_run(&f->serve, &f->ring, ng_mono_ms());
	}
	return NULL;
}

static int watch(struct ng_flow *f, int fd, int *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void cleanup(struct ng_flow *f)
{
	while (f->pods.n)
		pod_free(f, f->pods.v[--f->pods.n]);
	ng_vec_free(&f->pods);
	ng_flowserve_close(&f->serve);
	for (size_t i = 0; i < f->pending.n; i++)
		ng_flow_pod_free(&f->pending.v[i]);
	ng_vec_free(&f->pending);
	ng_flownode_close(&f->node);
	ng_flowq_close(&f->q);
	ng_flowring_free(&f->ring);
	if (f->serve.listen_fd >= 0) {
		close(f->serve.listen_fd);
		unlink(f->sock_path);
	}
	if (f->epfd >= 0)
		close(f->epfd);
	if (f->stop_fd >= 0)
		close(f->stop_fd);
	if (f->pods_fd >= 0)
		close(f->pods_fd);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int ng_flow_start(const char *state_dir, struct ng_flow **out, struct ng_err *err)
{
	struct ng_flow *f = calloc(1, sizeof(*f));

	if (!f)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	f->epfd = f->stop_fd = f->pods_fd = f->serve.listen_fd = -1;
	f->q.wake_fd = -1;
	f->tag_stop = TAG_STOP;
	f->tag_pods = TAG_PODS;
	f->tag_queue = TAG_QUEUE;
	f->tag_listen = TAG_LISTEN;
	f->tag_node = TAG_NODE;
	pthread_mutex_init(&f->mu, NULL);
	ng_flowserve_init(&f->serve, TAG_CLIENT);
	snprintf(f->sock_path, sizeof(f->sock_path), "%s/" NG_AGENT_SOCK, state_dir);
	f->epfd = f->serve.epfd = epoll_create1(EPOLL_CLOEXEC);
	f->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->pods_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->epfd < 0 || f->stop_fd < 0 || f->pods_fd < 0 || ng_flowq_init(&f->q) < 0 ||
	    ng_flowring_init(&f->ring) < 0) {
		ng_fail(err, NG_E_INTERNAL, "flow thread setup: %s", strerror(errno));
		goto fail;
	}
	/* Without its socket the agent still learns and watches: observe and
	 * status --names say no agent serves, and the log says why. */
	f->serve.listen_fd = ng_unix_listen(f->sock_path, err);
	if (f->serve.listen_fd < 0) {
		ng_alog("error", "flow_socket", NULL, NULL,
			"observe and status --names will not be served: %s", err->msg);
		memset(err, 0, sizeof(*err));
	}
	/* The node side's refusals: without this socket the pods' own still come. */
	if (ng_flownode_open(&f->node, err) < 0) {
		ng_alog("error", "flow_node", NULL, NULL, "the node side's refusals will not be read: %s",
			err->msg);
		memset(err, 0, sizeof(*err));
	}
	if (watch(f, f->stop_fd, &f->tag_stop) < 0 || watch(f, f->pods_fd, &f->tag_pods) < 0 ||
	    watch(f, f->q.wake_fd, &f->tag_queue) < 0 ||
	    (f->serve.listen_fd >= 0 && watch(f, f->serve.listen_fd, &f->tag_listen) < 0) ||
	    (f->node.open && watch(f, f->node.log.nl.fd, &f->tag_node) < 0)) {
		ng_fail(err, NG_E_INTERNAL, "flow thread setup: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&f->thread, NULL, thread_main, f) != 0) {
		ng_fail(err, NG_E_INTERNAL, "cannot start the flow thread");
		goto fail;
	}
	*out = f;
	return 0;
fail:
	cleanup(f);
	return -1;
}

void ng_flow_stop(struct ng_flow *f)
{
	uint64_t one = 1;

	if (!f)
		return;
	if (write(f->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(f->thread, NULL);
	cleanup(f);
}

void ng_flow_set_pods(struct ng_flow *f, const struct ng_flow_pod *pods, size_t n)
{
	NG_VEC(struct ng_flow_pod) v = {0};
	uint64_t one = 1;

	/* The copies are made before the lock: it is held for a swap. */
	for (size_t i = 0; i < n; i++) {
		struct ng_flow_pod c;

		if (ng_flow_pod_copy(&c, &pods[i]) < 0)
			break;
		if (ng_vec_push(&v, &c) < 0) {
			ng_flow_pod_free(&c);
			break;
		}
	}
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->pending.n; i++)
		ng_flow_pod_free(&f->pending.v[i]);
	ng_vec_free(&f->pending);
	f->pending.v = v.v;
	f->pending.n = v.n;
	f->pending.cap = v.cap;
	f->have_pending = true;
	pthread_mutex_unlock(&f->mu);
	if (write(f->pods_fd, &one, sizeof(one)) < 0) {
	}
}

struct ng_flowq *ng_flow_queue(struct ng_flow *f)
{
	return f ? &f->q : NULL;
}

void ng_flow_set_names(struct ng_flow *f, ng_flow_names_fn fn, void *data)
{
	if (!f)
		return;
	ng_flowserve_set_names(&f->serve, fn, data);
}
