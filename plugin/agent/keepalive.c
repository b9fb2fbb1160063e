/* The keep-alive thread. See keepalive.h. */
#include "agent/keepalive.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h> // IWYU pragma: keep (SYS_gettid)
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "kernel/ctlookup.h"
#include "kernel/netns.h"
#include "kernel/nl_netns.h"

struct ng_keepalive {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ng_ka_job *in, **in_tail, *out, **out_tail; /* under mu */
	size_t queued;                                     /* under mu */
	bool stop;                                         /* under mu */
	struct ng_ka_job *running;                         /* under mu: the job being looked up */
	bool cancel_running;                               /* under mu: its pod was released */
	int done_fd;
};

struct ng_ka_job *ng_ka_job_new(const char *key, const char *nonce, const struct ng_podref *pod)
{
	struct ng_ka_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	snprintf(j->key, sizeof(j->key), "%s", key);
	snprintf(j->nonce, sizeof(j->nonce), "%s", nonce);
	if (ng_podref_copy(&j->pod, pod) < 0) {
		free(j);
		return NULL;
	}
	return j;
}

void ng_ka_job_free(struct ng_ka_job *j)
{
	if (!j)
		return;
	ng_podref_free(&j->pod);
	free(j);
}

/* The elements of one (address, protocol) still without a live flow. */
struct group {
	struct ng_ka_job *j;
	uint32_t first;
};

static bool same_group(const struct ng_ka_elem *a, const struct ng_ka_elem *b)
{
	return a->proto == b->proto && ng_ip_eq(&a->ip, &b->ip);
}

/* One flow's port: every waiting element whose range holds it is live;
 * true while some element of the group still waits. */
static bool on_port(uint16_t dport, void *data)
{
	struct group *g = data;
	const struct ng_ka_elem *head = &g->j->e[g->first];
	bool waiting = false;

	for (uint32_t i = g->first; i < g->j->n; i++) {
		struct ng_ka_elem *e = &g->j->e[i];

		if (!same_group(e, head) || e->live)
			continue;
		if (dport >= e->p_lo && dport <= e->p_hi) {
			e->live = true;
			e->port = dport;
		} else {
			waiting = true;
		}
	}
	return waiting;
}

uint32_t ng_ka_lookups(const struct ng_ka_job *j, uint32_t n)
{
	uint32_t groups = 0;

	for (uint32_t i = 0; i < n; i++) {
		bool seen = false;

		for (uint32_t k = 0; k < i && !seen; k++)
			seen = same_group(&j->e[k], &j->e[i]);
		groups += !seen;
	}
	return groups;
}

static bool cancelled(struct ng_keepalive *k)
{
	bool c;

	pthread_mutex_lock(&k->mu);
	c = k->cancel_running;
	pthread_mutex_unlock(&k->mu);
	return c;
}

/* The rest after a lookup that took `us`: half as long (at most 100 ms),
 * so the lookups take at most two thirds of a core. */
static void rest(int64_t us)
{
	struct timespec ts;

	us /= 2;
	if (us > 100000)
		us = 100000;
	ts = (struct timespec){(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
	nanosleep(&ts, NULL);
}

static void run_job(struct ng_ka_job *j, bool pace)
{
	struct ng_err err = {0};
	struct ng_nl nl = {.fd = -1};
	bool done[NG_KA_ELEMS] = {false};
	int fd = -1, rc = ng_netns_open_pod(&j->pod, &fd, &err);

	if (rc != 0) {
		snprintf(j->error, sizeof(j->error), "%s", rc > 0 ? "the pod's namespace is gone" : err.msg);
		return;
	}
	for (uint32_t i = 0; i < j->n; i++) {
		struct group g = {j, i};
		bool cut = false;
		int64_t t0;

		if (done[i])
			continue;
		if (j->k && cancelled(j->k))
			break; /* its pod was released: let go of its namespace now */
		for (uint32_t k = i; k < j->n; k++)
			done[k] |= same_group(&j->e[k], &j->e[i]);
		if (nl.fd < 0 && ng_nl_open_netns(fd, NULL, &nl, &err) < 0) {
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
			break;
		}
		t0 = ng_mono_us();
		rc = ng_ct_flows_to(&nl, &j->e[i].ip, j->e[i].proto, NG_KA_ENTRIES, on_port, &g, &cut, &err);
		if (pace)
			rest(ng_mono_us() - t0);
		if (rc < 0) {
			snprintf(j->error, sizeof(j->error), "%s", err.msg);
			break;
		}
		if (cut) {
			/* Cut with elements still waiting: the entry budget. */
			for (uint32_t k = i; k < j->n; k++)
				if (same_group(&j->e[k], &j->e[i]) && !j->e[k].live) {
					j->cut++;
					break;
				}
			/* The dump stopped early: closing the socket drops the
			 * rest in the kernel, uncopied. */
			ng_nl_close(&nl);
			nl.fd = -1;
		}
	}
	if (nl.fd >= 0)
		ng_nl_close(&nl);
	close(fd);
}

void ng_ka_run(struct ng_ka_job *j)
{
	run_job(j, false);
}

void ng_ka_cancel(struct ng_keepalive *k, const char *key)
{
	struct ng_ka_job **pp, *gone = NULL;

	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	for (pp = &k->in; *pp;) {
		struct ng_ka_job *j = *pp;

		if (strcmp(j->key, key) != 0) {
			pp = &j->next;
			continue;
		}
		*pp = j->next;
		j->next = gone;
		gone = j;
		k->queued--;
	}
	k->in_tail = &k->in;
	while (*k->in_tail)
		k->in_tail = &(*k->in_tail)->next;
	if (k->running && !strcmp(k->running->key, key))
		k->cancel_running = true;
	pthread_mutex_unlock(&k->mu);
	while (gone) {
		struct ng_ka_job *next = gone->next;

		ng_ka_job_free(gone);
		gone = next;
	}
}

static void *thread_main(void *data)
{
	struct ng_keepalive *k = data;
	uint64_t one = 1;

	/* Below the main loop: under contention for the CPU, answers first. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) < 0) {
		/* not allowed: the pacing still bounds it */
	}
	pthread_mutex_lock(&k->mu);
	for (;;) {
		struct ng_ka_job *j;

		while (!k->in && !k->stop)
			pthread_cond_wait(&k->cv, &k->mu);
		if (k->stop)
			break;
		j = k->in;
		k->in = j->next;
		if (!k->in)
			k->in_tail = &k->in;
		j->next = NULL;
		k->running = j;
		k->cancel_running = false;
		j->k = k;
		pthread_mutex_unlock(&k->mu);
		run_job(j, true);
		pthread_mutex_lock(&k->mu);
		k->running = NULL;
		*k->out_tail = j;
		k->out_tail = &j->next;
		if (write(k->done_fd, &one, sizeof(one)) < 0) {
			/* saturated: a wakeup is pending anyway */
		}
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

int ng_ka_start(struct ng_keepalive **out, struct ng_err *err)
{
	struct ng_keepalive *k = calloc(1, sizeof(*k));

	if (!k)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	k->in_tail = &k->in;
	k->out_tail = &k->out;
	pthread_mutex_init(&k->mu, NULL);
	pthread_cond_init(&k->cv, NULL);
	k->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->done_fd < 0 || pthread_create(&k->thread, NULL, thread_main, k) != 0) {
		ng_fail(err, NG_E_INTERNAL, "starting the keep-alive thread: %s", strerror(errno));
		if (k->done_fd >= 0)
			close(k->done_fd);
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		free(k);
		return -1;
	}
	*out = k;
	return 0;
}

static void free_list(struct ng_ka_job *j)
{
	while (j) {
		struct ng_ka_job *next = j->next;

		ng_ka_job_free(j);
		j = next;
	}
}

void ng_ka_stop(struct ng_keepalive *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	free_list(k->in);
	free_list(k->out);
	close(k->done_fd);
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	free(k);
}

int ng_ka_fd(const struct ng_keepalive *k)
{
	return k->done_fd;
}

bool ng_ka_submit(struct ng_keepalive *k, struct ng_ka_job *j)
{
	bool ok;

	j->next = NULL;
	pthread_mutex_lock(&k->mu);
	ok = k->queued < NG_KA_QUEUE;
	if (ok) {
		*k->in_tail = j;
		k->in_tail = &j->next;
		k->queued++;
		pthread_cond_signal(&k->cv);
	}
	pthread_mutex_unlock(&k->mu);
	if (!ok)
		ng_ka_job_free(j);
	return ok;
}

struct ng_ka_job *ng_ka_take(struct ng_keepalive *k)
{
	struct ng_ka_job *j;
	uint64_t v;

	if (read(k->done_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing counted, the list may still hold jobs */
	}
	pthread_mutex_lock(&k->mu);
	j = k->out;
	if (j) {
		k->out = j->next;
		if (!k->out)
			k->out_tail = &k->out;
		j->next = NULL;
		k->queued--;
	}
	pthread_mutex_unlock(&k->mu);
	return j;
}
