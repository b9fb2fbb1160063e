#include "install/watch.h"
#include "base/clock.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/confdir.h"
#include "install/say.h"
#include "install/installplan.h"

#define DEBOUNCE        0.1  /* s of quiet before a pass: writers often touch several files */
#define DEBOUNCE_MAX    1.0  /* s: a dir that never goes quiet still gets a pass */
#define RESYNC          60.0 /* s between passes when nothing happens */
#define RETRY_MAX       30.0 /* s: cap of the back-off after a failed pass */
#define FIGHT_LIMIT     5    /* our writes ... */
#define FIGHT_WINDOW    60.0 /* ... within this many seconds make a fight */
#define FIGHT_DELAY_MAX 300.0

/* ---- fight detection ------------------------------------------------------- */

void ng_fight_init(struct ng_fight *f, unsigned limit, double window, double max_delay)
{
	memset(f, 0, sizeof(*f));
	f->limit = limit < 2 ? 2 : limit > NG_FIGHT_MAX ? NG_FIGHT_MAX : limit;
	f->window = window;
	f->max_delay = max_delay;
}

unsigned ng_fight_wrote(struct ng_fight *f, double now, double *span)
{
	unsigned drop = 0;

	while (drop < f->n && now - f->times[drop] > f->window)
		drop++;
	memmove(f->times, f->times + drop, (f->n - drop) * sizeof(f->times[0]));
	f->n -= drop;
	if (f->n == NG_FIGHT_MAX) {
		memmove(f->times, f->times + 1, (f->n - 1) * sizeof(f->times[0]));
		f->n--;
	}
	f->times[f->n++] = now;
	if (f->n < f->limit)
		return 0;
	*span = now - f->times[0];
	f->delay = f->delay > 0 ? f->delay * 2 : 2;
	if (f->delay > f->max_delay)
		f->delay = f->max_delay;
	f->not_before = now + f->delay;
	return f->n;
}

bool ng_fight_settled(struct ng_fight *f, double now)
{
	bool was = f->delay > 0;

	if (f->n == 0 || now - f->times[f->n - 1] < f->window)
		return false;
	f->n = 0;
	f->delay = 0;
	f->not_before = 0;
	return was;
}

/* ---- the loop -------------------------------------------------------------- */

static double now_s(void)
{
	return (double)ng_mono_us() / 1e6;
}

/* Drains the inotify queue. Returns 1 when a config-named file changed, or
 * anything in the entry's directory (watch `entry_wd`), or events were
 * lost; 0 when only other names did (our temp files, side files); -1 when
 * the conf dir itself went away. */
static int drain(int ifd, int conf_wd, int entry_wd)
{
	char buf[16 * (sizeof(struct inotify_event) + NAME_MAX + 1)]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	int relevant = 0;

	for (;;) {
		ssize_t n = read(ifd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return relevant;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->wd == conf_wd &&
			    (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)))
				return -1;
			if ((ev->mask & IN_Q_OVERFLOW) || (ev->wd == entry_wd && entry_wd >= 0) ||
			    (ev->wd == conf_wd && ev->len && ng_is_conf_name(ev->name)))
				relevant = 1;
			p += sizeof(*ev) + ev->len;
		}
	}
}

struct loop {
	ng_reconcile_fn fn;
	void *ctx;
	const char *label;
	struct ng_fight fight;
	double retry;         /* back-off after failed passes; 0 when the last one worked */
	char last_error[512]; /* said once, not once per retry */
};

/* One pass; returns when the next one is due (0: only on events). */
static double pass(struct loop *l, double now)
{
	struct ng_err err = {0};
	char file[NG_FILENAME_MAX + 1] = "";
	unsigned count;
	double span;
	int rc = l->fn(l->ctx, file, sizeof(file), &err);

	if (rc < 0) {
		if (strcmp(err.msg, l->last_error) != 0) {
			if (err.code == NG_E_TRY_AGAIN)
				ng_say("waiting: %s: %s", l->label, err.msg);
			else
				ng_say_error("%s (retrying with back-off; files left as they are)", err.msg);
			snprintf(l->last_error, sizeof(l->last_error), "%s", err.msg);
		}
		l->retry = l->retry > 0 ? l->retry * 2 : 1;
		if (l->retry > RETRY_MAX)
			l->retry = RETRY_MAX;
		return now + l->retry;
	}
	if (l->last_error[0])
		ng_say("recovered: %s holds our entry again", l->label);
	l->last_error[0] = '\0';
	l->retry = 0;
	if (rc == 0) {
		if (ng_fight_settled(&l->fight, now))
			ng_say("the other writer has been quiet for %.0f s; back-off cleared",
			       l->fight.window);
		return 0;
	}
	count = ng_fight_wrote(&l->fight, now, &span);
	if (count)
		ng_say_warn("fighting another writer: %s rewritten %u times in %.0f s; "
			    "something keeps removing our entry (pods created meanwhile are NOT protected); "
			    "next re-merge no sooner than %.0f s from now",
			    file, count, span, l->fight.delay);
	return 0;
}

int ng_watch_run(int dirfd, const char *label, const char *entry_dir, ng_reconcile_fn fn, void *ctx)
{
	struct loop l = {.fn = fn, .ctx = ctx, .label = label};
	char path[64];
	sigset_t sigs;
	int ifd, sfd, conf_wd, entry_wd = -1;
	double due, pending = 0, last;

	ng_fight_init(&l.fight, FIGHT_LIMIT, FIGHT_WINDOW, FIGHT_DELAY_MAX);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		ng_say_error("signalfd: %s", strerror(errno));
		return 1;
	}
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* The directory we opened, through its fd: a path could be swapped. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	conf_wd = ifd < 0 ? -1
			  : inotify_add_watch(ifd, path,
					      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE |
						      IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
	if (conf_wd < 0) {
		ng_say_error("inotify on %s: %s", label, strerror(errno));
		close(sfd);
		if (ifd >= 0)
			close(ifd);
		return 1;
	}
	/* Best effort: without it, entry edits still arrive with the resync. */
	if (entry_dir)
		entry_wd = inotify_add_watch(ifd, entry_dir,
					     IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR);
	ng_say("watching %s%s%s", label, entry_wd >= 0 ? " and " : "", entry_wd >= 0 ? entry_dir : "");
	/* The watch exists before the first pass, so no change is missed. */
	last = now_s();
	due = pass(&l, last);
	for (;;) {
		struct pollfd pfd[2] = {{.fd = ifd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		double now = now_s(), wait = due > 0 ? due - now : last + RESYNC - now;
		struct stat st;
		int timeout = wait <= 0 ? 0 : wait > 3600 ? 3600000 : (int)(wait * 1000) + 1;

		if (poll(pfd, 2, timeout) < 0 && errno != EINTR) {
			ng_say_error("poll: %s", strerror(errno));
			break;
		}
		now = now_s();
		/* Our open fd keeps a removed directory's inode alive, so no
		 * IN_DELETE_SELF comes: its link count says it (checked on every
		 * wake-up, at least once a minute). */
		if (fstat(dirfd, &st) == 0 && st.st_nlink == 0) {
			ng_say_error("%s was removed; exiting so that we are restarted", label);
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				ng_say("stopping on %s; our entry stays in the config",
				       strsignal((int)si.ssi_signo));
			close(ifd);
			close(sfd);
			return 0;
		}
		if (pfd[0].revents & POLLIN) {
			int d = drain(ifd, conf_wd, entry_wd);

			if (d < 0) {
				ng_say_error("%s was removed or moved; exiting so that we are restarted",
					     label);
				break;
			}
			if (d > 0) {
				if (pending == 0)
					pending = now;
				/* Debounced and capped; never before a fight's back-off. A
				 * change cuts a failed pass's retry wait short: it may be
				 * the fix (the primary writing its first config). */
				due = now + DEBOUNCE < pending + DEBOUNCE_MAX ? now + DEBOUNCE
									      : pending + DEBOUNCE_MAX;
				if (due < l.fight.not_before)
					due = l.fight.not_before;
			}
		}
		if ((due > 0 && now >= due) || (due == 0 && now >= last + RESYNC)) {
			pending = 0;
			last = now;
			due = pass(&l, now);
		}
	}
	close(ifd);
	close(sfd);
	return 1;
}
