/* Following the active entry: the conf dir, the generations. The pods'
 * side is livepods.c. See livepolicy.h. */
#include "agent/livepolicy.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/alog.h"
#include "agent/livepods.h"
#include "base/clock.h"
#include "policy/config.h"
#include "state/confdir.h"
#include "state/policygen.h"

struct ng_live {
	char conf_dir[4096], state_dir[4096];
	int fd, wd; /* inotify on conf_dir; wd -1: not watched (yet) */
	char active[4200];
	uint64_t key[4]; /* the active file's dev, inode, size, mtime */
	bool have_key;
	struct ng_policygen cur; /* the current generation (entry NULL: none yet) */
	char problem[768];       /* "" or why the active entry is not followed */
	uint64_t changes, refused;
	struct ng_livepods pods;
	int64_t seen_ms; /* when cur was seen (monotonic) */
	bool timing;     /* its pods are being re-planned */
	double replan_seconds;
};

#define WATCH_MASK \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

/* Watches the conf dir when it is there (again). */
static void watch_dir(struct ng_live *lv)
{
	if (lv->fd < 0)
		lv->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (lv->fd >= 0 && lv->wd < 0)
		lv->wd = inotify_add_watch(lv->fd, lv->conf_dir, WATCH_MASK | IN_ONLYDIR);
}

/* Not followed: nothing running changes, readiness says why (the log
 * once per distinct reason: an error when an entry is there and cannot be
 * taken, a warning when there is none to follow). */
static void problem(struct ng_live *lv, const char *level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem(struct ng_live *lv, const char *level, const char *fmt, ...)
{
	char msg[sizeof(lv->problem)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (strcmp(msg, lv->problem) != 0) {
		ng_alog(level, "policy_refused", NULL, NULL,
			"%s: nothing running changes; the pods keep generation %llu", msg,
			(unsigned long long)lv->cur.gen);
		if (!strcmp(level, "error"))
			lv->refused++;
	}
	snprintf(lv->problem, sizeof(lv->problem), "%s", msg);
}

/* A valid entry `e` (taken over): the current generation, or a new one. */
static void take(struct ng_live *lv, json_t *e, const char *file)
{
	char changes[512];
	struct ng_err err = {0};
	bool was_problem = lv->problem[0] != '\0';

	lv->problem[0] = '\0';
	if (lv->cur.entry && json_equal(e, lv->cur.entry)) {
		json_decref(e);
		if (was_problem || strcmp(lv->cur.file, file) != 0)
			ng_alog("info", "policy_current", NULL, NULL,
				"%s holds generation %llu's entry: nothing to re-plan", file,
				(unsigned long long)lv->cur.gen);
		snprintf(lv->cur.file, sizeof(lv->cur.file), "%.4000s", file);
		return;
	}
	if (lv->cur.entry)
		ng_entry_changes(lv->cur.entry, e, changes, sizeof(changes));
	else
		snprintf(changes, sizeof(changes), "the first entry this state dir follows");
	json_decref(lv->cur.entry);
	lv->cur.entry = e;
	lv->cur.gen++;
	lv->cur.at_ms = ng_wall_ms();
	snprintf(lv->cur.file, sizeof(lv->cur.file), "%.4000s", file);
	if (ng_policygen_write(lv->state_dir, &lv->cur, &err) < 0)
		ng_alog("error", "policy_unrecorded", NULL, NULL,
			"generation %llu is followed but not recorded (ADD stamps no pod with it): %s",
			(unsigned long long)lv->cur.gen, err.msg);
	lv->changes++;
	lv->seen_ms = ng_mono_ms();
	lv->timing = true;
	ng_alog("info", "policy_changed", NULL, NULL,
		"generation %llu from %s (changed: %s): every enforced pod of network \"%s\" not on it is "
		"re-planned",
		(unsigned long long)lv->cur.gen, file, changes,
		json_string_value(json_object_get(e, "name")) ? json_string_value(json_object_get(e, "name"))
							      : "");
}

/* Reads the active entry again: validated by ADD's parser, then taken. */
static void reread(struct ng_live *lv, const char *active)
{
	char used[4200];
	struct ng_err err = {0};
	struct ng_config cfg;
	json_t *raw = ng_conffile_entry(active, used, sizeof(used), &err), *e;
	int rc;

	if (!raw) {
		problem(lv, err.code == NG_E_DECODE ? "error" : "warning", "%.600s", err.msg);
		return;
	}
	e = ng_entry_of(raw);
	json_decref(raw);
	if (!e) {
		problem(lv, "error", "%.300s: out of memory", active);
		return;
	}
	rc = ng_config_parse(e, &cfg, &err);
	ng_config_free(&cfg);
	if (rc < 0) {
		json_decref(e);
		problem(lv, "error", "%.300s: our entry is refused: %.400s", active, err.msg);
		return;
	}
	take(lv, e, active);
}

void ng_live_poll(struct ng_live *lv, bool events)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char active[4200];
	struct stat st;
	uint64_t key[4] = {0};
	ssize_t n;

	if (events) {
		bool any = false;

		while (lv->fd >= 0 && (n = read(lv->fd, buf, sizeof(buf))) > 0)
			for (char *p = buf; p < buf + n; any = true) {
				const struct inotify_event *ev = (const struct inotify_event *)p;

				p += sizeof(*ev) + ev->len;
				if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF))
					lv->wd = -1; /* the directory went: watched again when back */
			}
		if (!any)
			return;       /* nothing happened: the tick looks anyway */
		lv->have_key = false; /* an event: read again whatever the identity */
	}
	if (lv->wd < 0)
		watch_dir(lv);
	if (ng_conffile_active(lv->conf_dir, active, sizeof(active)) < 0) {
		lv->have_key = false;
		problem(lv, "warning", "no network config in %.400s", lv->conf_dir);
		return;
	}
	/* The file the runtime reads, followed through a symlink: its identity
	 * tells a change the directory's events cannot (a target swapped). */
	if (stat(active, &st) == 0) {
		key[0] = (uint64_t)st.st_dev;
		key[1] = (uint64_t)st.st_ino;
		key[2] = (uint64_t)st.st_size;
		key[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	}
	if (lv->have_key && !memcmp(key, lv->key, sizeof(key)) && !strcmp(active, lv->active))
		return;
	memcpy(lv->key, key, sizeof(key));
	snprintf(lv->active, sizeof(lv->active), "%s", active);
	lv->have_key = true;
	reread(lv, active);
}

struct ng_live *ng_live_new(const char *conf_dir, const char *state_dir)
{
	struct ng_live *lv = calloc(1, sizeof(*lv));
	struct ng_err err = {0};

	if (!lv)
		return NULL;
	lv->fd = lv->wd = -1;
	ng_livepods_init(&lv->pods);
	snprintf(lv->conf_dir, sizeof(lv->conf_dir), "%s", conf_dir);
	snprintf(lv->state_dir, sizeof(lv->state_dir), "%s", state_dir);
	/* The generation a previous agent followed: its pods' records say it. */
	if (ng_policygen_read(state_dir, &lv->cur, &err) < 0)
		ng_alog("error", "policy_unrecorded", NULL, NULL, "%s: numbering starts again", err.msg);
	if (lv->cur.gen)
		ng_alog("info", "policy_recorded", NULL, NULL, "generation %llu, from %s",
			(unsigned long long)lv->cur.gen, lv->cur.file);
	ng_live_poll(lv, false);
	return lv;
}

void ng_live_free(struct ng_live *lv)
{
	if (!lv)
		return;
	if (lv->fd >= 0)
		close(lv->fd);
	ng_policygen_free(&lv->cur);
	ng_livepods_close(&lv->pods);
	free(lv);
}

const uint32_t *ng_live_self(const struct ng_live *lv, size_t *n)
{
	*n = lv ? lv->pods.n : 0;
	return lv ? lv->pods.portids : NULL;
}

bool ng_live_pending(const struct ng_live *lv)
{
	struct pollfd p = {.fd = lv ? lv->fd : -1, .events = POLLIN};

	return p.fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int ng_live_fd(const struct ng_live *lv)
{
	return lv ? lv->fd : -1;
}

/* The readiness line: followed and every pod on it, or why not. */
static void ready(const struct ng_live *lv, const struct ng_view_policy *vp, struct ng_ready *r)
{
	r->has_policy = true;
	r->policy = !lv->problem[0] && lv->cur.gen && !vp->failed;
	if (lv->problem[0])
		snprintf(r->policy_msg, sizeof(r->policy_msg), "%.600s (pods keep generation %llu)",
			 lv->problem, (unsigned long long)lv->cur.gen);
	else if (vp->failed)
		snprintf(r->policy_msg, sizeof(r->policy_msg),
			 "generation %llu: %llu pod(s) could not be re-planned to it (log: "
			 "policy_replan_failed; "
			 "tried again every %d s)",
			 (unsigned long long)lv->cur.gen, (unsigned long long)vp->failed,
			 NG_LIVE_RETRY_MS / 1000);
	else
		snprintf(r->policy_msg, sizeof(r->policy_msg),
			 "generation %llu from %.400s: %llu pod(s) on it%s", (unsigned long long)lv->cur.gen,
			 lv->cur.file, (unsigned long long)(vp->pods - vp->behind),
			 vp->behind ? ", the others being re-planned" : "");
}

/* Has the published part moved? (Member by member: the struct has
 * padding and a double.) */
static bool moved(const struct ng_view_policy *a, const struct ng_view_policy *b)
{
	return a->gen != b->gen || a->valid != b->valid || a->pods != b->pods || a->behind != b->behind ||
	       a->failed != b->failed || a->changes != b->changes || a->refused != b->refused ||
	       a->replans != b->replans || a->replan_errors != b->replan_errors || a->dropped != b->dropped ||
	       a->cut != b->cut || a->replan_seconds != b->replan_seconds || strcmp(a->file, b->file) != 0;
}

bool ng_live_run(struct ng_live *lv, struct ng_opod *const *pods, size_t n, const struct ng_opod_env *env,
		 struct ng_view *local)
{
	struct ng_view_policy *vp = &local->policy, before = *vp;
	bool was_ready = local->ready.policy;
	char was_msg[sizeof(local->ready.policy_msg)];

	snprintf(was_msg, sizeof(was_msg), "%s", local->ready.policy_msg);
	memset(vp, 0, sizeof(*vp));
	if (lv->cur.gen && lv->cur.entry)
		ng_livepods_run(&lv->pods, &lv->cur, pods, n, env, vp);
	/* The figure of a change: from seen to its last pod re-planned. */
	if (lv->timing && vp->behind == vp->failed) {
		lv->timing = false;
		lv->replan_seconds = (double)(ng_mono_ms() - lv->seen_ms) / 1000.0;
		ng_alog("info", "policy_applied", NULL, NULL,
			"generation %llu: every enforced pod of its network runs it (%llu pod(s); %llu "
			"re-planned "
			"so far, %llu failed), %.3f s after the change was seen",
			(unsigned long long)lv->cur.gen, (unsigned long long)vp->pods,
			(unsigned long long)lv->pods.st.replans,
			(unsigned long long)lv->pods.st.replan_errors, lv->replan_seconds);
	}
	vp->gen = lv->cur.gen;
	vp->valid = !lv->problem[0] && lv->cur.gen;
	snprintf(vp->file, sizeof(vp->file), "%.500s", lv->cur.file);
	vp->changes = lv->changes;
	vp->refused = lv->refused;
	vp->replans = lv->pods.st.replans;
	vp->replan_errors = lv->pods.st.replan_errors;
	vp->dropped = lv->pods.st.dropped;
	vp->cut = lv->pods.st.cut;
	vp->replan_seconds = lv->replan_seconds;
	ready(lv, vp, &local->ready);
	return moved(&before, vp) || was_ready != local->ready.policy ||
	       strcmp(was_msg, local->ready.policy_msg) != 0;
}
