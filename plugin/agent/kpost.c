/* Events and conditions to the API, from a thread of its own. See kpost.h. */
#include "agent/kpost.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/alog.h"
#include "agent/kobj.h"
#include "base/clock.h"
#include "base/vec.h"

struct item {
	bool condition, status, warning;
	char ns[256], name[256], uid[128], reason[64];
	char msg[NG_KOBJ_MSG_MAX + 1];
	int64_t not_before_ms; /* a failed condition patch: tried again then */
};

/* The last time a pod had a reason with a message: the spam filter. */
struct seen {
	char key[600];
	int64_t at_ms;
};

struct ng_kpost {
	struct ng_kapi_config api;
	char node[256];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	NG_VEC(struct item) q;
	NG_VEC(struct seen) seen;
	int64_t bucket_ms; /* token bucket: the time its tokens were counted */
	double tokens;
	struct ng_kpost_counts c;
};

static void path_of(const struct item *it, char *buf, size_t len)
{
	char ns[800], name[800];

	ng_kapi_escape(it->ns, ns, sizeof(ns));
	ng_kapi_escape(it->name, name, sizeof(name));
	if (it->condition)
		snprintf(buf, len, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	else
		snprintf(buf, len, "/api/v1/namespaces/%s/events", ns);
}

/* One request; true when the API took it. A condition of a pod the API
 * no longer has (404) is done too. */
static bool send_one(struct ng_kapi *k, const struct ng_kpost *p, const struct item *it)
{
	struct ng_kobj_pod pod = {it->ns, it->name, it->uid};
	json_t *body = it->condition ? ng_kobj_condition_patch(it->status, it->reason, it->msg, ng_wall_ms())
				     : ng_kobj_event(&pod, it->warning ? "Warning" : "Normal", it->reason,
						     it->msg, p->node, ng_wall_ms());
	char path[2000], *text = body ? json_dumps(body, JSON_COMPACT) : NULL, *resp = NULL;
	struct ng_err err = {0};
	size_t rlen;
	long status = 0;
	int rc;

	json_decref(body);
	if (!text)
		return false;
	path_of(it, path, sizeof(path));
	rc = ng_kapi_call(k, it->condition ? "PATCH" : "POST", path,
			  it->condition ? "application/strategic-merge-patch+json" : "application/json", text,
			  &status, &resp, &rlen, &err);
	free(text);
	if (rc == 0 && (status / 100 == 2 || (it->condition && status == 404))) {
		free(resp);
		return true;
	}
	if (rc == 0)
		snprintf(err.msg, sizeof(err.msg), "HTTP status %ld: %.200s", status, resp ? resp : "");
	ng_alog("warning", it->condition ? "kube_condition_failed" : "kube_event_failed", NULL, NULL,
		"%s/%s %s: %s", it->ns, it->name, it->reason, err.msg);
	free(resp);
	return false;
}

static void *thread_main(void *data)
{
	struct ng_kpost *p = data;
	struct ng_err err = {0};
	struct ng_kapi *k = ng_kapi_new(&p->api, &err);

	if (!k) {
		ng_alog("error", "kube_post", NULL, NULL, "%s", err.msg);
		return NULL;
	}
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		int64_t now = ng_mono_ms(), wait_ms = -1;
		size_t pick = p->q.n;
		struct item it;
		bool ok;

		for (size_t i = 0; i < p->q.n; i++)
			if (p->q.v[i].not_before_ms <= now) {
				pick = i;
				break;
			} else if (wait_ms < 0 || p->q.v[i].not_before_ms - now < wait_ms) {
				wait_ms = p->q.v[i].not_before_ms - now;
			}
		if (pick == p->q.n) {
			if (wait_ms < 0) {
				pthread_cond_wait(&p->cv, &p->mu);
			} else {
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_sec += wait_ms / 1000;
				ts.tv_nsec += (wait_ms % 1000) * 1000000L;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			}
			continue;
		}
		it = p->q.v[pick];
		memmove(&p->q.v[pick], &p->q.v[pick + 1], (p->q.n - pick - 1) * sizeof(it));
		p->q.n--;
		pthread_mutex_unlock(&p->mu);
		ok = send_one(k, p, &it);
		pthread_mutex_lock(&p->mu);
		if (ok) {
			p->c.posted++;
			continue;
		}
		p->c.errors++;
		if (!it.condition)
			continue; /* an event is best effort */
		/* Again later, unless a newer state of the pod came meanwhile. */
		bool newer = false;

		for (size_t i = 0; i < p->q.n && !newer; i++)
			newer = p->q.v[i].condition && !strcmp(p->q.v[i].ns, it.ns) &&
				!strcmp(p->q.v[i].name, it.name);
		it.not_before_ms = ng_mono_ms() + 2000;
		if (!newer && ng_vec_push(&p->q, &it) < 0)
			p->c.dropped++;
	}
	pthread_mutex_unlock(&p->mu);
	ng_kapi_free(k);
	return NULL;
}

int ng_kpost_start(const struct ng_kapi_config *api, const char *node, struct ng_kpost **out,
		   struct ng_err *err)
{
	struct ng_kpost *p = calloc(1, sizeof(*p));

	if (!p)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	p->api = *api;
	snprintf(p->node, sizeof(p->node), "%s", node);
	p->tokens = NG_KPOST_RATE * 4;
	p->bucket_ms = ng_mono_ms();
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, thread_main, p) != 0) {
		free(p);
		return ng_fail(err, NG_E_INTERNAL, "cannot start the API poster thread");
	}
	*out = p;
	return 0;
}

void ng_kpost_stop(struct ng_kpost *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	ng_vec_free(&p->q);
	ng_vec_free(&p->seen);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}

/* The spam filter and the token bucket (under mu): may this event go? */
static bool admit(struct ng_kpost *p, const char *ns, const char *name, const char *reason, const char *msg)
{
	int64_t now = ng_mono_ms();
	uint64_t h = 1469598103934665603ULL; /* FNV-1a of the message */
	char key[600];
	struct seen s;

	for (const char *c = msg; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	snprintf(key, sizeof(key), "%.250s/%.250s/%.60s/%016llx", ns, name, reason, (unsigned long long)h);
	p->tokens += (double)(now - p->bucket_ms) * NG_KPOST_RATE / 1000.0;
	if (p->tokens > NG_KPOST_RATE * 4)
		p->tokens = NG_KPOST_RATE * 4;
	p->bucket_ms = now;
	for (size_t i = 0; i < p->seen.n;) {
		if (now - p->seen.v[i].at_ms >= NG_KPOST_SAME_MS) {
			p->seen.v[i] = p->seen.v[--p->seen.n];
			continue;
		}
		if (!strcmp(p->seen.v[i].key, key))
			return false;
		i++;
	}
	if (p->tokens < 1)
		return false;
	p->tokens -= 1;
	snprintf(s.key, sizeof(s.key), "%s", key);
	s.at_ms = now;
	return ng_vec_push(&p->seen, &s) == 0;
}

static void enqueue(struct ng_kpost *p, struct item *it)
{
	if (p->q.n >= NG_KPOST_QUEUE) {
		/* The oldest event goes (a condition slot is never dropped for one). */
		for (size_t i = 0; i < p->q.n; i++)
			if (!p->q.v[i].condition) {
				memmove(&p->q.v[i], &p->q.v[i + 1], (p->q.n - i - 1) * sizeof(*it));
				p->q.n--;
				p->c.dropped++;
				break;
			}
	}
	if (p->q.n >= NG_KPOST_QUEUE || ng_vec_push(&p->q, it) < 0)
		p->c.dropped++;
	pthread_cond_signal(&p->cv);
}

void ng_kpost_event(struct ng_kpost *p, const char *ns, const char *name, const char *uid, bool warning,
		    const char *reason, const char *msg)
{
	struct item it = {.warning = warning};

	snprintf(it.ns, sizeof(it.ns), "%s", ns);
	snprintf(it.name, sizeof(it.name), "%s", name);
	snprintf(it.uid, sizeof(it.uid), "%s", uid ? uid : "");
	snprintf(it.reason, sizeof(it.reason), "%s", reason);
	ng_kobj_clean(msg, it.msg, sizeof(it.msg));
	pthread_mutex_lock(&p->mu);
	if (admit(p, ns, name, reason, it.msg))
		enqueue(p, &it);
	else
		p->c.rate_limited++;
	pthread_mutex_unlock(&p->mu);
}

void ng_kpost_condition(struct ng_kpost *p, const char *ns, const char *name, bool status, const char *reason,
			const char *msg)
{
	struct item it = {.condition = true, .status = status};

	snprintf(it.ns, sizeof(it.ns), "%s", ns);
	snprintf(it.name, sizeof(it.name), "%s", name);
	snprintf(it.reason, sizeof(it.reason), "%s", reason);
	ng_kobj_clean(msg, it.msg, sizeof(it.msg));
	pthread_mutex_lock(&p->mu);
	/* The pod's queued states (ng_kpost_fold keeps them at two). */
	size_t at[2], n = 0, keep;
	bool held[2];

	for (size_t i = 0; i < p->q.n && n < 2; i++)
		if (p->q.v[i].condition && !strcmp(p->q.v[i].ns, ns) && !strcmp(p->q.v[i].name, name)) {
			held[n] = !p->q.v[i].status && !p->q.v[i].not_before_ms;
			at[n++] = i;
		}
	keep = ng_kpost_fold(held, n, status);
	if (keep < n) {
		p->q.v[at[keep]] = it;
		for (size_t j = n; j-- > keep + 1;) {
			memmove(&p->q.v[at[j]], &p->q.v[at[j] + 1], (p->q.n - at[j] - 1) * sizeof(it));
			p->q.n--;
		}
		pthread_cond_signal(&p->cv);
	} else {
		enqueue(p, &it);
	}
	pthread_mutex_unlock(&p->mu);
}

size_t ng_kpost_fold(const bool *held, size_t n, bool status)
{
	if (!n || !status)
		return 0; /* False now: whatever was queued is past */
	/* True: behind a False not tried yet, else in place of the last. */
	return held[n - 1] ? n : n - 1;
}

void ng_kpost_counts(struct ng_kpost *p, struct ng_kpost_counts *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->c;
	pthread_mutex_unlock(&p->mu);
}
