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
#include "agent/flowclient.h"
#include "agent/flowq.h"
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
	int epfd, stop_fd, pods_fd, listen_fd;
	int tag_stop, tag_pods, tag_queue, tag_listen, tag_node;

	pthread_mutex_t mu; /* pending and have_pending only */
	NG_VEC(struct ng_flow_pod) pending;
	bool have_pending;

	pthread_mutex_t names_mu; /* held while a names document is built */
	ng_flow_names_fn names;
	void *names_data;

	struct ng_flowq q;
	struct ng_flowring ring;
	NG_VEC(struct flow_pod *) pods;
	struct ng_flownode node;
	struct ng_flowclient *clients[NG_FLOW_CLIENTS];
	size_t n_clients;
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

/* The learner's refused queries; and what its queue had to drop. */
static void drain_queue(struct ng_flow *f)
{
	struct ng_flow_ev ev;
	uint64_t drop, one;

	if (read(f->q.wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return;
	for (int i = 0; i < NG_FLOWQ && ng_flowq_pop(&f->q, &ev); i++)
		ng_flowring_push(&f->ring, &ev);
	drop = ng_flowq_take_dropped(&f->q);
	if (drop) {
		ng_flowev_note(&ev, NG_FLOW_LOST, NULL, NULL, NG_LOG_POD, drop,
			       "refused DNS queries the flow thread could not take from the learner in time",
			       ng_wall_ms());
		ng_flowring_push(&f->ring, &ev);
	}
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
	drain_queue(f);
	f->next_tick_ms = now + TICK_MS;
}

/* ---- clients ------------------------------------------------------------------- */

static void client_drop(struct ng_flow *f, size_t i)
{
	ng_flowclient_free(f->clients[i]);
	f->clients[i] = f->clients[--f->n_clients];
}

static void accept_all(struct ng_flow *f)
{
	uid_t uid;
	int fd;

	while ((fd = ng_unix_accept(f->listen_fd, &uid)) >= 0) {
		struct ng_flowclient *c;
		struct epoll_event ev = {.events = EPOLLIN};
		/* The socket file is root's (0600); a peer of another uid came
		 * in some other way: nothing for it. */
		if (uid != 0 && uid != geteuid()) {
			close(fd);
			continue;
		}
		if (f->n_clients == NG_FLOW_CLIENTS) {
			static const char busy[] =
				"{\"event\":\"error\",\"error\":\"the agent serves 16 clients "
				"already\"}\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			}
			close(fd);
			continue;
		}
		c = ng_flowclient_new(fd, TAG_CLIENT, ng_mono_ms());
		if (!c)
			continue;
		ev.data.ptr = &c->tag;
		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			ng_flowclient_free(c);
			continue;
		}
		f->clients[f->n_clients++] = c;
	}
}

/* The first line of an observe answer: what the stream covers. */
static char *start_line(struct ng_flow *f)
{
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

static void answer_names(struct ng_flow *f, struct ng_flowclient *c)
{
	json_t *doc = NULL;
	char *s;

	pthread_mutex_lock(&f->names_mu);
	if (f->names)
		doc = f->names(f->names_data, &c->r.filter);
	pthread_mutex_unlock(&f->names_mu);
	if (!doc)
		doc = json_pack("{s:s,s:s}", "event", "error", "error", "the agent has no view yet");
	s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (s) {
		ng_flowclient_queue(c, s, strlen(s));
		ng_flowclient_queue(c, "\n", 1);
	}
	free(s);
	json_decref(doc);
	c->closing = true;
}

/* A client's socket said something: its request, or that it is gone. */
static bool client_event(struct ng_flow *f, struct ng_flowclient *c, uint32_t events)
{
	if (events & (EPOLLHUP | EPOLLERR))
		return false;
	if ((events & EPOLLIN) && !c->have_req) {
		int rc = ng_flowclient_read_request(c);

		if (rc < 0 && !c->closing)
			return false;
		if (rc > 0 && c->r.op == NG_FLOW_OP_NAMES) {
			answer_names(f, c);
		} else if (rc > 0) {
			char *s = start_line(f);

			ng_flowclient_start(c, &f->ring, s ? s : "{\"event\":\"start\"}");
			free(s);
		}
	} else if (events & EPOLLIN) {
		char b[256];
		ssize_t n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return false; /* the reader went away */
	}
	return true;
}

/* Every client: what the ring holds for it, written as far as it reads. */
static void serve_clients(struct ng_flow *f, int64_t now)
{
	for (size_t i = f->n_clients; i-- > 0;) {
		struct ng_flowclient *c = f->clients[i];
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->tag};
		int rc;

		if (!c->have_req && !c->closing) {
			if (now - c->since_ms > NG_FLOWCLIENT_REQ_MS)
				client_drop(f, i);
			continue;
		}
		ng_flowclient_fill(c, &f->ring, ng_wall_ms());
		rc = ng_flowclient_flush(c);
		if (rc < 0 || (rc > 0 && c->closing)) {
			client_drop(f, i);
			continue;
		}
		/* Output waiting: the socket is full, say when it drains. */
		if ((rc == 0) != c->want_out) {
			c->want_out = rc == 0;
			ev.events |= c->want_out ? EPOLLOUT : 0;
			epoll_ctl(f->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
}

static void drop_client_ptr(struct ng_flow *f, struct ng_flowclient *c)
{
	for (size_t i = 0; i < f->n_clients; i++)
		if (f->clients[i] == c) {
			client_drop(f, i);
			return;
		}
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
			case TAG_QUEUE: drain_queue(f); break;
			case TAG_LISTEN: accept_all(f); break;
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

				if (!client_event(f, c, evs[i].events)) {
					drop_client_ptr(f, c);
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
		serve_clients(f, ng_mono_ms());
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
	while (f->n_clients)
		client_drop(f, f->n_clients - 1);
	for (size_t i = 0; i < f->pending.n; i++)
		ng_flow_pod_free(&f->pending.v[i]);
	ng_vec_free(&f->pending);
	ng_flownode_close(&f->node);
	ng_flowq_close(&f->q);
	ng_flowring_free(&f->ring);
	if (f->listen_fd >= 0) {
		close(f->listen_fd);
		unlink(f->sock_path);
	}
	if (f->epfd >= 0)
		close(f->epfd);
	if (f->stop_fd >= 0)
		close(f->stop_fd);
	if (f->pods_fd >= 0)
		close(f->pods_fd);
	pthread_mutex_destroy(&f->mu);
	pthread_mutex_destroy(&f->names_mu);
	free(f);
}

int ng_flow_start(const char *state_dir, struct ng_flow **out, struct ng_err *err)
{
	struct ng_flow *f = calloc(1, sizeof(*f));

	if (!f)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	f->epfd = f->stop_fd = f->pods_fd = f->listen_fd = -1;
	f->q.wake_fd = -1;
	f->tag_stop = TAG_STOP;
	f->tag_pods = TAG_PODS;
	f->tag_queue = TAG_QUEUE;
	f->tag_listen = TAG_LISTEN;
	f->tag_node = TAG_NODE;
	pthread_mutex_init(&f->mu, NULL);
	pthread_mutex_init(&f->names_mu, NULL);
	snprintf(f->sock_path, sizeof(f->sock_path), "%s/" NG_AGENT_SOCK, state_dir);
	f->epfd = epoll_create1(EPOLL_CLOEXEC);
	f->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	f->pods_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->epfd < 0 || f->stop_fd < 0 || f->pods_fd < 0 || ng_flowq_init(&f->q) < 0 ||
	    ng_flowring_init(&f->ring) < 0) {
		ng_fail(err, NG_E_INTERNAL, "flow thread setup: %s", strerror(errno));
		goto fail;
	}
	/* Without its socket the agent still learns and watches: observe and
	 * status --names say no agent serves, and the log says why. */
	f->listen_fd = ng_unix_listen(f->sock_path, err);
	if (f->listen_fd < 0) {
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
	    (f->listen_fd >= 0 && watch(f, f->listen_fd, &f->tag_listen) < 0) ||
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
	pthread_mutex_lock(&f->names_mu);
	f->names = fn;
	f->names_data = data;
	pthread_mutex_unlock(&f->names_mu);
}
