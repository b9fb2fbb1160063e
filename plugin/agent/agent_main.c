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
#include "agent/migrate.h"
#include "base/clock.h"
#include "agent/ops.h"
#include "agent/opshook.h"
#include "agent/readyz.h"
#include "base/cliarg.h"
#include "state/confdir.h"
#include "state/record.h"

#define SWEEP_MS 1000

static int usage(FILE *f, int rc)
{
	fprintf(f,
		"usage: boxxkite-netguard agent [--state-dir DIR] [--listen ADDR:PORT] [--repair]\n"
		"         [--check-interval SECONDS] [--cni-bin-dir DIR] [--cni-conf-dir DIR]\n"
		"  Learns the DNS-name destinations of pods with egress.names \"learn\" from their own\n"
		"  DNS answers, before the answers reach them; watches every enforced pod's tables for\n"
		"  drift. Runs in the node's network namespace.\n"
		"  --state-dir       where ADD records pods (the plugin's stateDir; default %s)\n"
		"  --listen          serve /readyz and /metrics (default %s: loopback; give the node's\n"
		"                    IP, e.g. 10.0.0.5:9617, for a scraper on the pod network; none: off)\n"
		"  --repair          re-apply a pod's recorded policy when its tables drift\n"
		"  --check-interval  seconds between CHECKs of every pod (default %d; changes are\n"
		"                    also seen at once through nf_tables events)\n"
		"  --cni-bin-dir     where /readyz expects the installed binary (default %s)\n"
		"  --cni-conf-dir    whose active config must hold our entry (default %s)\n",
		NG_DEFAULT_STATE_DIR, NG_AGENT_LISTEN_DEFAULT, NG_OPS_CHECK_MS / 1000, NG_DEFAULT_CNI_BIN_DIR,
		NG_DEFAULT_CONF_DIR);
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
		struct ng_pod *p;
		struct stat st;
		bool refused;

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused) || refused)
			continue;
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
	ng_agent_ops_publish(a);
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
				char key[256];
				struct ng_pod *pod;
				bool refused;

				if (!ng_record_name(ev->name, key, sizeof(key), &refused) || refused)
					continue;
				if ((pod = ng_pod_find(a, key)))
					ng_pod_release(a, pod, "its record was removed (DEL)");
			}
		}
	}
	ng_agent_ops_publish(a);
}

static void sweep(struct ng_agent *a)
{
	uint64_t ticks;
	int64_t now = ng_mono_ms();

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
	/* 0.2's records first, before either thread reads the directory. */
	ng_agent_migrate(a->state_dir);
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
	if (listen_addr && strcmp(listen_addr, "none") != 0) {
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
			case NG_EV_OPS: ng_agent_ops_relearn(a); break;
			}
			/* A release inside this batch frees a pod another event
			 * may point at: start over with a fresh wait. */
			if (kind == NG_EV_INOTIFY || kind == NG_EV_TIMER || kind == NG_EV_OPS)
				break;
		}
	}
}

int ng_agent_main(int argc, char **argv)
{
	struct ng_agent a;
	const char *listen_addr = NG_AGENT_LISTEN_DEFAULT;
	struct ng_ops_config oc = {.bin_dir = NG_DEFAULT_CNI_BIN_DIR,
				   .conf_dir = NG_DEFAULT_CONF_DIR,
				   .check_ms = NG_OPS_CHECK_MS};
	struct ng_err err = {0};
	long secs;

	memset(&a, 0, sizeof(a));
	snprintf(a.state_dir, sizeof(a.state_dir), "%s", NG_DEFAULT_STATE_DIR);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--state-dir") && i + 1 < argc && argv[i + 1][0] == '/')
			snprintf(a.state_dir, sizeof(a.state_dir), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--listen") && i + 1 < argc)
			listen_addr = argv[++i];
		else if (!strcmp(argv[i], "--repair"))
			oc.repair = true;
		else if (!strcmp(argv[i], "--check-interval") && i + 1 < argc &&
			 ng_arg_long("agent", "check-interval", argv[++i], 1, 86400, &secs))
			oc.check_ms = (int)secs * 1000;
		else if (!strcmp(argv[i], "--cni-bin-dir") && i + 1 < argc && argv[i + 1][0] == '/')
			oc.bin_dir = argv[++i];
		else if (!strcmp(argv[i], "--cni-conf-dir") && i + 1 < argc && argv[i + 1][0] == '/')
			oc.conf_dir = argv[++i];
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
		else
			return usage(stderr, 2);
	}
	if (!strcmp(listen_addr, "none"))
		listen_addr = NULL;
	if (setup(&a, listen_addr) < 0)
		return 1;
	/* The ops thread before the first scan, so its view knows the
	 * learner's sockets from the first publish. */
	oc.state_dir = a.state_dir;
	if (ng_ops_start(&oc, &a.ops, &err) < 0) {
		ng_alog("error", "start", NULL, "%s", err.msg);
		return 1;
	}
	a.ev_ops = NG_EV_OPS;
	if (watch(&a, ng_ops_relearn_fd(a.ops), &a.ev_ops) < 0) {
		ng_alog("error", "start", NULL, "watching the ops thread: %s", strerror(errno));
		ng_ops_stop(a.ops);
		return 1;
	}
	scan(&a);
	a.serving = true;
	ng_agent_ops_publish(&a);
	ng_alog("info", "serving", NULL, "state dir %s, %zu pods, /metrics and /readyz on %s%s", a.state_dir,
		a.pods.n, listen_addr ? listen_addr : "(none)", oc.repair ? ", drift repaired" : "");
	run(&a);
	ng_ops_stop(a.ops);
	a.ops = NULL;
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
