/* `boxxkite-netguard agent`: the loop. See agent.h and README "The node
 * agent". */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "agent/agent.h"

#define SWEEP_MS 1000

static int usage(FILE *f, int rc)
{
	fprintf(f,
		"usage: boxxkite-netguard agent [--state-dir DIR] [--listen ADDR:PORT]\n"
		"  Learns the DNS-name destinations of pods with egress.names \"learn\" from their own\n"
		"  DNS answers, before the answers reach them. Runs in the node's network namespace.\n"
		"  --state-dir  where ADD records pods (the plugin's stateDir; default %s)\n"
		"  --listen     serve /readyz and /metrics (e.g. 127.0.0.1:9617)\n",
		NG_DEFAULT_STATE_DIR);
	return rc;
}

/* One agent per state dir: the lock says who serves (STATUS asks it). A
 * STATUS probing it holds it shared for a moment: retry for a second. */
static int take_lock(struct ng_agent *a)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/" NG_AGENT_LOCK, a->state_dir);
	a->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (a->lock_fd < 0) {
		ng_alog("error", "start", NULL, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < 100; i++) {
		if (flock(a->lock_fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		usleep(10000);
	}
	ng_alog("error", "start", NULL, "another agent holds %s", path);
	return -1;
}

static int watch(struct ng_agent *a, int fd, int *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Every record in pods/, loaded or confirmed; pods whose record is gone
 * released. Catches whatever inotify could not tell (overflow, restart). */
static void scan(struct ng_agent *a)
{
	char dir[4200];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, a->state_dir);
	d = opendir(dir);
	if (!d)
		return;
	for (size_t i = 0; i < a->pods.n; i++)
		a->pods.v[i]->seen = false;
	while ((e = readdir(d))) {
		char key[256];
		size_t n = strlen(e->d_name);
		struct ng_pod *p;
		struct stat st;

		if (e->d_name[0] == '.' || n < 6 || n - 5 >= sizeof(key) ||
		    strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(n - 5), e->d_name);
		p = ng_pod_find(a, key);
		if (p && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (uint64_t)st.st_ino == p->rec_ino) {
			p->seen = true;
			continue;
		}
		ng_pod_load(a, e->d_name);
	}
	closedir(d);
	for (size_t i = a->pods.n; i-- > 0;)
		if (!a->pods.v[i]->seen)
			ng_pod_release(a, a->pods.v[i], "its record is gone");
}

static void on_inotify(struct ng_agent *a)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(a->inotify_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				scan(a);
				continue;
			}
			if (!ev->len)
				continue;
			if (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE)) {
				ng_pod_load(a, ev->name);
			} else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
				size_t l = strlen(ev->name);
				char key[256];
				struct ng_pod *pod;

				if (l < 6 || l - 5 >= sizeof(key) || strcmp(ev->name + l - 5, ".json") != 0)
					continue;
				snprintf(key, sizeof(key), "%.*s", (int)(l - 5), ev->name);
				if ((pod = ng_pod_find(a, key)))
					ng_pod_release(a, pod, "its record was removed (DEL)");
			}
		}
	}
}

static void sweep(struct ng_agent *a)
{
	uint64_t ticks;
	int64_t now = ng_now_ms();

	if (read(a->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	scan(a);
	for (size_t i = a->pods.n; i-- > 0;)
		ng_pod_sweep(a, a->pods.v[i], now);
}

static int setup(struct ng_agent *a, const char *listen_addr)
{
	struct ng_err err = {0};
	char dir[4200];
	sigset_t sigs;
	struct itimerspec its = {.it_interval = {SWEEP_MS / 1000, (SWEEP_MS % 1000) * 1000000L},
				 .it_value = {SWEEP_MS / 1000, (SWEEP_MS % 1000) * 1000000L}};

	a->ev_inotify = NG_EV_INOTIFY;
	a->ev_timer = NG_EV_TIMER;
	a->ev_signal = NG_EV_SIGNAL;
	a->ev_http = NG_EV_HTTP;
	a->http_fd = -1;
	if (ng_state_dirs(a->state_dir, &err) < 0) {
		ng_alog("error", "start", NULL, "%s", err.msg);
		return -1;
	}
	if (take_lock(a) < 0)
		return -1;
	a->msg = malloc(sizeof(*a->msg));
	a->rx = malloc(65536 + 4096);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	a->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	a->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	a->signal_fd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, a->state_dir);
	if (!a->msg || !a->rx || a->epfd < 0 || a->inotify_fd < 0 || a->timer_fd < 0 || a->signal_fd < 0 ||
	    inotify_add_watch(a->inotify_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM) <
		    0 ||
	    timerfd_settime(a->timer_fd, 0, &its, NULL) < 0 || watch(a, a->inotify_fd, &a->ev_inotify) < 0 ||
	    watch(a, a->timer_fd, &a->ev_timer) < 0 || watch(a, a->signal_fd, &a->ev_signal) < 0) {
		ng_alog("error", "start", NULL, "setting up the loop: %s", strerror(errno));
		return -1;
	}
	if (listen_addr) {
		a->http_fd = ng_http_listen(listen_addr, &err);
		if (a->http_fd < 0 || watch(a, a->http_fd, &a->ev_http) < 0) {
			ng_alog("error", "start", NULL, "%s", err.msg);
			return -1;
		}
	}
	/* The host-side tables live in this namespace (the node's). */
	a->node_nl_open = ng_nl_open(&a->node_nl, &err) == 0;
	return 0;
}

static void run(struct ng_agent *a)
{
	struct epoll_event evs[64];

	while (!a->stop) {
		int n = epoll_wait(a->epfd, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			int kind = *(int *)evs[i].data.ptr;

			switch (kind) {
			case NG_EV_NFQ: ng_pod_serve(a, evs[i].data.ptr); break;
			case NG_EV_INOTIFY: on_inotify(a); break;
			case NG_EV_TIMER: sweep(a); break;
			case NG_EV_HTTP: ng_http_serve(a); break;
			case NG_EV_SIGNAL: a->stop = true; break;
			}
			/* A release inside this batch frees a pod another event
			 * may point at: start over with a fresh wait. */
			if (kind == NG_EV_INOTIFY || kind == NG_EV_TIMER)
				break;
		}
	}
}

int ng_agent_main(int argc, char **argv)
{
	struct ng_agent a;
	const char *listen_addr = NULL;

	memset(&a, 0, sizeof(a));
	snprintf(a.state_dir, sizeof(a.state_dir), "%s", NG_DEFAULT_STATE_DIR);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--state-dir") && i + 1 < argc && argv[i + 1][0] == '/')
			snprintf(a.state_dir, sizeof(a.state_dir), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen_addr = argv[++i];
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
		else
			return usage(stderr, 2);
	}
	if (setup(&a, listen_addr) < 0)
		return 1;
	scan(&a);
	a.serving = true;
	ng_alog("info", "serving", NULL, "state dir %s, %zu pods", a.state_dir, a.pods.n);
	run(&a);
	ng_alog("info", "stopping", NULL,
		"signal received; queued answers are dropped until an agent serves");
	while (a.pods.n)
		ng_pod_release(&a, a.pods.v[a.pods.n - 1], "agent stopping");
	ng_vec_free(&a.pods);
	ng_vec_free(&a.pending);
	ng_learn_result_free(&a.lr);
	if (a.node_nl_open)
		ng_nl_close(&a.node_nl);
	free(a.msg);
	free(a.rx);
	return 0;
}
