/* `boxxkite-netguard agent`: the loop. See agent.h and README "The node
 * agent". */
#include "agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "agent/alog.h"
#include "agent/flow.h"
#include "agent/http.h"
#include "agent/kubeopt.h"
#include "agent/keepalive.h"
#include "agent/learner.h"
#include "agent/migrate.h"
#include "agent/ops.h"
#include "agent/readyz.h"
#include "base/clock.h"
#include "base/cliarg.h"
#include "kernel/nl.h"
#include "state/confdir.h"
#include "state/record.h"

#define SWEEP_MS                1000
/* glibc's defaults, fixed (see ng_agent_main) */
#define NG_AGENT_MMAP_THRESHOLD (128 * 1024)
#define NG_AGENT_TRIM_THRESHOLD (256 * 1024)
#define SCAN_TICKS              10 /* a full scan of stateDir/pods every 10 sweeps */

/* The loop's own state. Its epoll reports either a pointer to one of the
 * fds below (the fd's own field is the tag) or a pod of the learner. */
struct ng_agent {
	char state_dir[4096];
	int epfd, inotify_fd, timer_fd, signal_fd, lock_fd, ka_fd;
	struct ng_nl node_nl; /* host-side tables, in the agent's own namespace */
	bool node_nl_open;
	struct ng_learner learner;
	bool serving;            /* the first scan is done: /readyz */
	uint64_t ticks;          /* sweeps so far */
	struct ng_ops *ops;      /* the ops thread (agent/ops.h) */
	struct ng_http *http;    /* the HTTP thread (agent/http.h), NULL: --listen none */
	struct ng_keepalive *ka; /* the keep-alive thread (agent/keepalive.h) */
	struct ng_flow *flow;    /* the flow thread (agent/flow.h): observe, agent.sock */
	bool stop;
};

static int usage(FILE *f, int rc)
{
	fprintf(f,
		"usage: boxxkite-netguard agent [--state-dir DIR] [--listen ADDR:PORT] [--repair]\n"
		"         [--check-interval SECONDS] [--cni-bin-dir DIR] [--cni-conf-dir DIR]\n"
		"         [--pod-metrics on|off|N]\n"
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
		"  --cni-conf-dir    whose active config must hold our entry; the agent follows that\n"
		"                    entry onto running pods (live policy; default %s)\n"
		"  --pod-metrics     on | off | N: per-pod series on /metrics always, never, or while\n"
		"                    at most N pods are recorded (default %d); node totals always\n"
		"%s",
		NG_DEFAULT_STATE_DIR, NG_AGENT_LISTEN_DEFAULT, NG_OPS_CHECK_MS / 1000, NG_DEFAULT_CNI_BIN_DIR,
		NG_DEFAULT_CONF_DIR, NG_POD_METRICS_DEFAULT, NG_KUBEOPT_USAGE);
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
		ng_alog("error", "start", NULL, NULL, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < 100; i++) {
		if (flock(a->lock_fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		usleep(10000);
	}
	ng_alog("error", "start", NULL, NULL, "another agent holds %s", path);
	return -1;
}

static int watch(struct ng_agent *a, int fd, int *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void scan(struct ng_agent *a)
{
	ng_learner_scan(&a->learner);
	ng_learner_publish(&a->learner, a->ops, a->serving);
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
				ng_learner_scan(&a->learner);
				continue;
			}
			if (!ev->len)
				continue;
			if (ev->mask & (IN_MOVED_TO | IN_CLOSE_WRITE))
				ng_learner_load(&a->learner, ev->name);
			else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
				ng_learner_removed(&a->learner, ev->name);
		}
	}
	ng_learner_publish(&a->learner, a->ops, a->serving);
}

static void sweep(struct ng_agent *a)
{
	uint64_t ticks;
	int64_t now = ng_mono_ms();

	if (read(a->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	/* The directory's events tell every record change (an overflow
	 * rescans at once): the full scan, a stat per record, is the safety
	 * net, every SCAN_TICKS sweeps, so that a node of many pods does not
	 * pay it on this thread every second. */
	if (++a->ticks % SCAN_TICKS == 0)
		ng_learner_scan(&a->learner);
	ng_learner_publish(&a->learner, a->ops, a->serving);
	/* a pod taken on again is published before it serves an answer */
	if (ng_learner_sweep(&a->learner, now))
		ng_learner_publish(&a->learner, a->ops, a->serving);
}

static int setup(struct ng_agent *a)
{
	struct ng_err err = {0};
	char dir[4200];
	sigset_t sigs;
	struct itimerspec its = {.it_interval = {SWEEP_MS / 1000, (SWEEP_MS % 1000) * 1000000L},
				 .it_value = {SWEEP_MS / 1000, (SWEEP_MS % 1000) * 1000000L}};

	a->epfd = a->inotify_fd = a->timer_fd = a->signal_fd = a->lock_fd = a->ka_fd = -1;
	if (ng_state_dirs(a->state_dir, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		return -1;
	}
	if (take_lock(a) < 0)
		return -1;
	/* 0.2's records first, before either thread reads the directory. */
	ng_agent_migrate(a->state_dir);
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
	/* The host-side tables live in this namespace (the node's). */
	a->node_nl_open = ng_nl_open(&a->node_nl, &err) == 0;
	if (ng_learner_init(&a->learner, a->state_dir, a->epfd, a->node_nl_open ? &a->node_nl : NULL) < 0 ||
	    a->epfd < 0 || a->inotify_fd < 0 || a->timer_fd < 0 || a->signal_fd < 0 ||
	    inotify_add_watch(a->inotify_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM) <
		    0 ||
	    timerfd_settime(a->timer_fd, 0, &its, NULL) < 0 || watch(a, a->inotify_fd, &a->inotify_fd) < 0 ||
	    watch(a, a->timer_fd, &a->timer_fd) < 0 || watch(a, a->signal_fd, &a->signal_fd) < 0) {
		ng_alog("error", "start", NULL, NULL, "setting up the loop: %s", strerror(errno));
		return -1;
	}
	/* The ops thread's wakes for pods parked during its rebuilds
	 * (agent/podlock.h). */
	if (watch(a, a->learner.locks.freed_fd, (int *)(void *)&a->learner.locks) < 0) {
		ng_alog("error", "start", NULL, NULL, "watching the pods' locks: %s", strerror(errno));
		return -1;
	}
	/* The node-side observer's copies: read as they come (and by the
	 * learner, when an answer's node-side question finds nothing). */
	if (ng_learner_observer_fd(&a->learner) >= 0 &&
	    watch(a, ng_learner_observer_fd(&a->learner), (int *)(void *)&a->learner.obs) < 0) {
		ng_alog("error", "start", NULL, NULL, "watching the observer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void run(struct ng_agent *a)
{
	struct epoll_event evs[64];

	while (!a->stop) {
		int n = epoll_wait(a->epfd, evs, 64, -1);

		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &a->inotify_fd)
				on_inotify(a);
			else if (tag == &a->timer_fd)
				sweep(a);
			else if (tag == &a->ka_fd)
				ng_learner_kept_alive(&a->learner);
			else if (tag == &a->signal_fd)
				a->stop = true;
			else if (tag == (void *)&a->learner.obs)
				ng_learner_observe(&a->learner);
			else if (tag == (void *)&a->learner.locks)
				ng_learner_unpark(&a->learner);
			else if (ng_learner_serve(&a->learner, tag)) {
				/* it let the pod go and took it on again: published
				 * before the new one serves */
				ng_learner_publish(&a->learner, a->ops, a->serving);
				break;
			}
			/* A release inside this batch frees a pod another event
			 * may point at: start over with a fresh wait. */
			if (tag == &a->inotify_fd || tag == &a->timer_fd)
				break;
		}
	}
}

/* The options (as the other commands: getopt_long); 0 to run, else the
 * exit status. */
static int options(int argc, char **argv, struct ng_agent *a, const char **listen_addr,
		   struct ng_ops_config *oc, struct ng_kubeopt *ko)
{
	static const struct option opts[] = {
		{"state-dir", required_argument, NULL, 's'},
		{"listen", required_argument, NULL, 'l'},
		{"repair", no_argument, NULL, 'r'},
		{"check-interval", required_argument, NULL, 'c'},
		{"cni-bin-dir", required_argument, NULL, 'b'},
		{"cni-conf-dir", required_argument, NULL, 'd'},
		{"kube-api", required_argument, NULL, NG_KUBEOPT_API},
		{"kube-token", required_argument, NULL, NG_KUBEOPT_TOKEN},
		{"kube-ca", required_argument, NULL, NG_KUBEOPT_CA},
		{"node-name", required_argument, NULL, NG_KUBEOPT_NODE},
		{"pod-metrics", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long secs;
	int c;

	/* '+': in order, stopping at the first operand (there are none: an
	 * error); the usage text is the only complaint. */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (optarg[0] != '/')
				return usage(stderr, 2);
			snprintf(a->state_dir, sizeof(a->state_dir), "%s", optarg);
			break;
		case 'l': *listen_addr = optarg; break;
		case 'r': oc->repair = true; break;
		case 'c':
			if (!ng_arg_long("agent", "check-interval", optarg, 1, 86400, &secs))
				return usage(stderr, 2);
			oc->check_ms = (int)secs * 1000;
			break;
		case 'b':
			if (optarg[0] != '/')
				return usage(stderr, 2);
			oc->bin_dir = optarg;
			break;
		case 'd':
			if (optarg[0] != '/')
				return usage(stderr, 2);
			oc->conf_dir = optarg;
			break;
		case 'p':
			if (!strcmp(optarg, "on"))
				oc->pod_metrics_limit = -1;
			else if (!strcmp(optarg, "off"))
				oc->pod_metrics_limit = 0;
			else if (ng_arg_long("agent", "pod-metrics", optarg, 1, 1000000, &secs))
				oc->pod_metrics_limit = (int)secs;
			else
				return usage(stderr, 2);
			break;
		case 'h': return usage(stdout, 0);
		case NG_KUBEOPT_API:
		case NG_KUBEOPT_TOKEN:
		case NG_KUBEOPT_CA:
		case NG_KUBEOPT_NODE:
			if (ng_kubeopt_set(ko, c, optarg) < 0)
				return usage(stderr, 2);
			break;
		default: return usage(stderr, 2);
		}
	}
	return optind < argc ? usage(stderr, 2) : -1;
}

int ng_agent_main(int argc, char **argv)
{
	struct ng_agent a;
	const char *listen_addr = NG_AGENT_LISTEN_DEFAULT;
	struct ng_ops_config oc = {.pod_metrics_limit = NG_POD_METRICS_DEFAULT,
				   .bin_dir = NG_DEFAULT_CNI_BIN_DIR,
				   .conf_dir = NG_DEFAULT_CONF_DIR,
				   .check_ms = NG_OPS_CHECK_MS};
	struct ng_err err = {0};
	struct ng_kubeopt ko = {0};
	int rc;

	memset(&a, 0, sizeof(a));
	/* Memory goes back to the node when what used it goes (a pod that
	 * flooded answers, a large learned set read): glibc's thresholds are
	 * fixed here, not raised by the first large block freed, after which
	 * blocks up to its size came from the threads' heaps and their free
	 * tops (8 MiB after one flooding pod) were never returned. */
	mallopt(M_MMAP_THRESHOLD, NG_AGENT_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, NG_AGENT_TRIM_THRESHOLD);
	snprintf(a.state_dir, sizeof(a.state_dir), "%s", NG_DEFAULT_STATE_DIR);
	rc = options(argc, argv, &a, &listen_addr, &oc, &ko);
	if (rc >= 0)
		return rc;
	if (!strcmp(listen_addr, "none"))
		listen_addr = NULL;
	if (setup(&a) < 0)
		return 1;
	/* The API's watch first: the ops thread follows its table. */
	if (ng_kubeopt_start(&ko, &oc.kube) < 0)
		return 1;
	/* The flow thread before the ops thread, which tells it the pods;
	 * the learner hands it the queries it refuses. */
	if (ng_flow_start(a.state_dir, &a.flow, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		ng_kubeopt_stop(oc.kube);
		return 1;
	}
	a.learner.sh.flowq = ng_flow_queue(a.flow);
	/* The ops thread before the first scan, so its view knows the
	 * learner's sockets from the first publish. */
	oc.state_dir = a.state_dir;
	oc.locks = &a.learner.locks;
	oc.flow = a.flow;
	if (ng_ops_start(&oc, &a.ops, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		ng_flow_stop(a.flow);
		ng_kubeopt_stop(oc.kube);
		return 1;
	}
	/* HTTP on a thread of its own (agent/http.h): no client can hold this
	 * loop, which holds every learning pod's DNS answers. */
	if (listen_addr && ng_http_start(listen_addr, a.ops, &a.http, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		ng_ops_stop(a.ops);
		ng_flow_stop(a.flow);
		return 1;
	}
	if (ng_ka_start(&a.ka, &err) < 0) {
		ng_alog("error", "start", NULL, NULL, "%s", err.msg);
		ng_http_stop(a.http);
		ng_ops_stop(a.ops);
		ng_flow_stop(a.flow);
		return 1;
	}
	a.learner.sh.ka = a.ka;
	a.ka_fd = ng_ka_fd(a.ka);
	if (watch(&a, a.ka_fd, &a.ka_fd) < 0) {
		ng_alog("error", "start", NULL, NULL, "watching the keep-alive thread: %s", strerror(errno));
		ng_ka_stop(a.ka);
		ng_http_stop(a.http);
		ng_ops_stop(a.ops);
		ng_flow_stop(a.flow);
		ng_kubeopt_stop(oc.kube);
		return 1;
	}
	/* `status --names` reads the ops thread's view through the flow thread. */
	ng_flow_set_names(a.flow, ng_ops_names, a.ops);
	scan(&a);
	a.serving = true;
	ng_http_set_serving(a.http, true);
	ng_learner_publish(&a.learner, a.ops, a.serving);
	ng_alog("info", "serving", NULL, NULL, "state dir %s, %zu pods, /metrics and /readyz on %s%s",
		a.state_dir, a.learner.pods.n, listen_addr ? listen_addr : "(none)",
		oc.repair ? ", drift repaired" : "");
	run(&a);
	ng_http_stop(a.http);
	a.http = NULL;
	ng_flow_set_names(a.flow, NULL, NULL); /* before the view it reads goes */
	ng_ops_stop(a.ops);
	a.ops = NULL;
	ng_kubeopt_stop(oc.kube);
	ng_alog("info", "stopping", NULL, NULL,
		"signal received; queued answers are dropped until an agent serves");
	ng_learner_free(&a.learner);
	ng_flow_stop(a.flow);
	ng_ka_stop(a.ka);
	if (a.node_nl_open)
		ng_nl_close(&a.node_nl);
	return 0;
}
