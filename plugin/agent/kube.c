/* The watch of the node's pods and the shared table. See kube.h. */
#include "agent/kube.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "agent/alog.h"
#include "agent/kpost.h"
#include "base/clock.h"

struct ng_kube {
	struct ng_kube_config c;
	pthread_t thread;
	atomic_bool stop;
	int wake_fd;
	struct ng_kpost *post;
	char rv[NG_KPOD_RV_MAX]; /* the watch thread's own */

	/* Nothing below is touched by either thread but under `mu`. */
	pthread_mutex_t mu;
	ng_kpod_vec pods;
	uint64_t gen;
	int64_t start_ms;
	int64_t down_ms; /* when the watch stopped being connected (0: never was) */
	struct ng_kube_status st;
};

static void wake(struct ng_kube *k)
{
	uint64_t one = 1;

	if (write(k->wake_fd, &one, sizeof(one)) < 0) {
		/* saturated: a wakeup is pending anyway */
	}
}

static size_t find(const ng_kpod_vec *v, const char *ns, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].ns, ns) && !strcmp(v->v[i].name, name))
			return i;
	return v->n;
}

/* A pod of another node is not ours (the field selector said so; a pod
 * moved off the node by the API is gone here). */
static bool ours(const struct ng_kube *k, const struct ng_kpod *p)
{
	return !p->node[0] || !strcmp(p->node, k->c.node);
}

/* Upserts (takes p's strings) or, gone, removes; under mu. */
static void put(struct ng_kube *k, struct ng_kpod *p, bool gone)
{
	size_t i = find(&k->pods, p->ns, p->name);

	if (gone || !ours(k, p)) {
		if (i < k->pods.n) {
			ng_kpod_free(&k->pods.v[i]);
			k->pods.v[i] = k->pods.v[--k->pods.n];
		}
		ng_kpod_free(p);
	} else if (i < k->pods.n) {
		ng_kpod_free(&k->pods.v[i]);
		k->pods.v[i] = *p;
	} else if (ng_vec_push(&k->pods, p) < 0) {
		ng_kpod_free(p);
	}
	k->gen++;
	k->st.pods = k->pods.n;
}

static void set_error(struct ng_kube *k, const char *what, const char *msg)
{
	pthread_mutex_lock(&k->mu);
	k->st.errors++;
	snprintf(k->st.last_error, sizeof(k->st.last_error), "%s: %.200s", what, msg);
	pthread_mutex_unlock(&k->mu);
	ng_alog("warning", "kube_watch", NULL, NULL, "%s: %s", what, msg);
}

static void pods_query(const struct ng_kube *k, char *buf, size_t len)
{
	char sel[600], esc[1900];

	snprintf(sel, sizeof(sel), "spec.nodeName=%s", k->c.node);
	ng_kapi_escape(sel, esc, sizeof(esc));
	snprintf(buf, len, "/api/v1/pods?fieldSelector=%s", esc);
}

/* The list: the whole table replaced, the version to watch from. */
static int list(struct ng_kube *k, struct ng_kapi *api)
{
	char path[2100], *body = NULL;
	ng_kpod_vec pods = {0};
	struct ng_err err = {0};
	size_t blen, skipped;
	long status;

	pods_query(k, path, sizeof(path));
	if (ng_kapi_call(api, "GET", path, NULL, NULL, &status, &body, &blen, &err) < 0) {
		set_error(k, "list", err.msg);
		return -1;
	}
	if (status != 200) {
		snprintf(err.msg, sizeof(err.msg), "HTTP status %ld: %.200s", status, body);
		free(body);
		set_error(k, "list", err.msg);
		return -1;
	}
	if (ng_kpod_list_parse(body, blen, &pods, k->rv, &skipped, &err) < 0) {
		free(body);
		ng_kpod_vec_free(&pods);
		set_error(k, "list", err.msg);
		return -1;
	}
	free(body);
	pthread_mutex_lock(&k->mu);
	ng_kpod_vec_free(&k->pods);
	k->pods = (ng_kpod_vec){0};
	for (size_t i = 0; i < pods.n; i++)
		put(k, &pods.v[i], false);
	ng_vec_free(&pods);
	k->st.lists++;
	k->st.listed = true;
	pthread_mutex_unlock(&k->mu);
	ng_alog("info", "kube_listed", NULL, NULL, "%zu pod(s) of node %s at resourceVersion %s%s",
		k->st.pods, k->c.node, k->rv, skipped ? " (some items unreadable, skipped)" : "");
	wake(k);
	return 0;
}

/* What one watch request ended with. */
struct watch_ctx {
	struct ng_kube *k;
	bool gone;   /* 410: list again */
	bool failed; /* an ERROR line or a line that does not parse */
	bool opened;
	char why[300];
};

static bool on_line(const char *line, size_t len, void *data)
{
	struct watch_ctx *w = data;
	struct ng_kube *k = w->k;
	struct ng_kwatch_event ev;
	struct ng_err err = {0};

	if (!line) { /* the stream's headers: HTTP 200 */
		pthread_mutex_lock(&k->mu);
		w->opened = k->st.connected = true;
		k->st.watches++;
		pthread_mutex_unlock(&k->mu);
		return true;
	}
	if (ng_kwatch_parse(line, len, &ev, &err) < 0) {
		/* A Status body of a refused watch is no event: its code tells. */
		json_t *st = json_loadb(line, len, 0, NULL);
		const json_t *code = json_object_get(st, "code");

		w->gone = json_is_integer(code) && json_integer_value(code) == 410;
		snprintf(w->why, sizeof(w->why), "%.280s", w->gone ? "410 Gone" : err.msg);
		json_decref(st);
		w->failed = true;
		return false;
	}
	pthread_mutex_lock(&k->mu);
	k->st.events_seen++;
	pthread_mutex_unlock(&k->mu);
	if (ev.type == NG_KW_ERROR) {
		w->gone = ev.code == 410;
		snprintf(w->why, sizeof(w->why), "ERROR %d: %.250s", ev.code, ev.message);
		w->failed = true;
		ng_kwatch_event_free(&ev);
		return false;
	}
	if (ev.pod.rv[0])
		snprintf(k->rv, sizeof(k->rv), "%s", ev.pod.rv);
	if (ev.type != NG_KW_BOOKMARK) {
		pthread_mutex_lock(&k->mu);
		put(k, &ev.pod, ev.type == NG_KW_DELETED);
		pthread_mutex_unlock(&k->mu);
		wake(k);
	} else {
		ng_kwatch_event_free(&ev);
	}
	return true;
}

static void nap(struct ng_kube *k, int64_t ms)
{
	for (int64_t end = ng_mono_ms() + ms; !atomic_load(&k->stop) && ng_mono_ms() < end;)
		usleep(50000);
}

static void *thread_main(void *data)
{
	struct ng_kube *k = data;
	struct ng_err err = {0};
	struct ng_kapi *api = ng_kapi_new(&k->c.api, &err);
	int64_t backoff = 1000;
	bool need_list = true;

	if (!api) {
		set_error(k, "start", err.msg);
		return NULL;
	}
	while (!atomic_load(&k->stop)) {
		char path[2400], base[2100], rv[3 * NG_KPOD_RV_MAX];
		struct watch_ctx w = {.k = k};
		long status = 0;
		int rc;

		if (need_list) {
			if (list(k, api) < 0) {
				nap(k, backoff);
				backoff = backoff * 2 > NG_KUBE_BACKOFF_MS ? NG_KUBE_BACKOFF_MS : backoff * 2;
				continue;
			}
			need_list = false;
		}
		pods_query(k, base, sizeof(base));
		ng_kapi_escape(k->rv, rv, sizeof(rv));
		snprintf(path, sizeof(path),
			 "%s&watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%d", base, rv,
			 NG_KUBE_WATCH_S);
		rc = ng_kapi_watch(api, path, on_line, &w, &k->stop, NG_KUBE_STALL_S, &status, &err);
		pthread_mutex_lock(&k->mu);
		if (k->st.connected || !k->down_ms)
			k->down_ms = ng_mono_ms();
		k->st.connected = false;
		pthread_mutex_unlock(&k->mu);
		if (atomic_load(&k->stop))
			break;
		if (w.gone) {
			ng_alog("info", "kube_relist", NULL, NULL,
				"resourceVersion %s expired (410 Gone): listing again", k->rv);
			need_list = true;
			continue;
		}
		if (rc == 0 && status == 200 && !w.failed) {
			backoff = 1000; /* the server ended it (timeoutSeconds): again at once */
			continue;
		}
		if (rc < 0)
			set_error(k, "watch", err.msg);
		else if (w.failed)
			set_error(k, "watch", w.why);
		else
			set_error(k, "watch", status ? "the stream was refused" : "no response");
		if (status && status != 200 && !w.failed)
			need_list = true; /* 401, 403, 500: start from a fresh list once it answers again */
		nap(k, backoff);
		backoff = backoff * 2 > NG_KUBE_BACKOFF_MS ? NG_KUBE_BACKOFF_MS : backoff * 2;
	}
	ng_kapi_free(api);
	return NULL;
}

int ng_kube_start(const struct ng_kube_config *c, struct ng_kube **out, struct ng_err *err)
{
	struct ng_kube *k = calloc(1, sizeof(*k));

	if (!k)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	k->c = *c;
	k->st.enabled = true;
	k->start_ms = ng_mono_ms();
	pthread_mutex_init(&k->mu, NULL);
	k->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->wake_fd < 0) {
		free(k);
		return ng_fail(err, NG_E_INTERNAL, "eventfd: %s", strerror(errno));
	}
	if (ng_kpost_start(&c->api, c->node, &k->post, err) < 0) {
		close(k->wake_fd);
		free(k);
		return -1;
	}
	if (pthread_create(&k->thread, NULL, thread_main, k) != 0) {
		ng_kpost_stop(k->post);
		close(k->wake_fd);
		free(k);
		return ng_fail(err, NG_E_INTERNAL, "cannot start the API watch thread");
	}
	*out = k;
	return 0;
}

void ng_kube_stop(struct ng_kube *k)
{
	if (!k)
		return;
	atomic_store(&k->stop, true);
	pthread_join(k->thread, NULL);
	ng_kpost_stop(k->post);
	ng_kpod_vec_free(&k->pods);
	close(k->wake_fd);
	pthread_mutex_destroy(&k->mu);
	free(k);
}

int ng_kube_wake_fd(const struct ng_kube *k)
{
	return k->wake_fd;
}

void ng_kube_clear_wake(struct ng_kube *k)
{
	uint64_t v;

	if (read(k->wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

uint64_t ng_kube_generation(struct ng_kube *k)
{
	uint64_t g;

	pthread_mutex_lock(&k->mu);
	g = k->gen;
	pthread_mutex_unlock(&k->mu);
	return g;
}

bool ng_kube_lookup(struct ng_kube *k, const char *ns, const char *name, struct ng_kpod *out)
{
	bool found = false;
	size_t i;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&k->mu);
	i = find(&k->pods, ns, name);
	if (k->st.listed && i < k->pods.n) {
		*out = k->pods.v[i];
		out->egress = NULL;
		found = !k->pods.v[i].egress || (out->egress = strdup(k->pods.v[i].egress));
	}
	pthread_mutex_unlock(&k->mu);
	return found;
}

void ng_kube_event(struct ng_kube *k, const char *ns, const char *name, const char *uid, bool warning,
		   const char *reason, const char *msg)
{
	ng_kpost_event(k->post, ns, name, uid, warning, reason, msg);
}

void ng_kube_condition(struct ng_kube *k, const char *ns, const char *name, bool status, const char *reason,
		       const char *msg)
{
	ng_kpost_condition(k->post, ns, name, status, reason, msg);
}

void ng_kube_status(struct ng_kube *k, struct ng_kube_status *out)
{
	struct ng_kpost_counts pc;
	int64_t now = ng_mono_ms();

	pthread_mutex_lock(&k->mu);
	*out = k->st;
	out->stale_ms = k->st.connected ? 0 : now - (k->down_ms ? k->down_ms : k->start_ms);
	out->stale = !k->st.listed || out->stale_ms > NG_KUBE_STALE_MS;
	if (!out->stale)
		out->stale_ms = 0;
	pthread_mutex_unlock(&k->mu);
	ng_kpost_counts(k->post, &pc);
	out->posted = pc.posted;
	out->post_errors = pc.errors;
	out->post_dropped = pc.dropped;
	out->rate_limited = pc.rate_limited;
}

bool ng_kube_readyz(struct ng_kube *k, FILE *out)
{
	struct ng_kube_status s;

	if (!k) {
		fprintf(out, "ok kube: off (no Kubernetes API configured: grants are read at ADD only)\n");
		return true;
	}
	ng_kube_status(k, &s);
	if (!s.stale)
		fprintf(out, "ok kube: the watch of this node's pods is current (%llu pods)\n",
			(unsigned long long)s.pods);
	else
		fprintf(out, "FAIL kube: the watch is stale%s (%lld s): last applied grants stay; %s\n",
			s.listed ? "" : ", no list read yet", (long long)(s.stale_ms / 1000),
			s.last_error[0] ? s.last_error : "connecting");
	return !s.stale;
}

void ng_kube_metrics(struct ng_kube *k, FILE *out)
{
	struct ng_kube_status s = {0};

	if (k)
		ng_kube_status(k, &s);
	fprintf(out,
		"# HELP netguard_agent_kube_watch_up 1 when the watch of the node's pods is current "
		"(0: stale or off).\n# TYPE netguard_agent_kube_watch_up gauge\n"
		"netguard_agent_kube_watch_up %d\n",
		k && !s.stale);
	fprintf(out,
		"# HELP netguard_agent_kube_watch_stale_seconds How long the watch has not been current.\n"
		"# TYPE netguard_agent_kube_watch_stale_seconds gauge\n"
		"netguard_agent_kube_watch_stale_seconds %lld\n",
		(long long)(s.stale_ms / 1000));
	fprintf(out,
		"# HELP netguard_agent_kube_requests_total Requests to the API by kind.\n"
		"# TYPE netguard_agent_kube_requests_total counter\n"
		"netguard_agent_kube_requests_total{kind=\"list\"} %llu\n"
		"netguard_agent_kube_requests_total{kind=\"watch\"} %llu\n"
		"netguard_agent_kube_requests_total{kind=\"post\"} %llu\n",
		(unsigned long long)s.lists, (unsigned long long)s.watches, (unsigned long long)s.posted);
	fprintf(out,
		"# HELP netguard_agent_kube_errors_total Failures by kind (watch: list or watch failed; "
		"post: an event or condition not taken; dropped: queue full; rate_limited: spam filter).\n"
		"# TYPE netguard_agent_kube_errors_total counter\n"
		"netguard_agent_kube_errors_total{kind=\"watch\"} %llu\n"
		"netguard_agent_kube_errors_total{kind=\"post\"} %llu\n"
		"netguard_agent_kube_errors_total{kind=\"dropped\"} %llu\n"
		"netguard_agent_kube_errors_total{kind=\"rate_limited\"} %llu\n",
		(unsigned long long)s.errors, (unsigned long long)s.post_errors,
		(unsigned long long)s.post_dropped, (unsigned long long)s.rate_limited);
}
