/* The ops thread's pods, in step with stateDir/pods. See opsdir.h. */
#include "agent/opsdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "agent/opspod.h"
#include "state/record.h"

static struct ng_opod *find(const ng_opod_vec *pods, const char *key, bool refused)
{
	for (size_t i = 0; i < pods->n; i++)
		if (!strcmp(pods->v[i]->d.key, key) && pods->v[i]->d.refused_file == refused)
			return pods->v[i];
	return NULL;
}

void ng_opsdir_drop(ng_opod_vec *pods, size_t i, const char *why)
{
	struct ng_opod *p = pods->v[i];

	if (ng_opod_enforced(p))
		ng_opod_log("info", "pod_unwatched", p, "%s", why);
	pods->v[i] = pods->v[--pods->n];
	ng_opod_free(p);
}

/* A refused record goes once a later ADD of the same pod decided, or
 * after NG_REFUSED_KEEP_S. */
static bool refused_stale(const ng_opod_vec *pods, const struct ng_opod *p, int64_t now)
{
	if (!p->d.refused_file)
		return false;
	if (now - p->d.at_ms > (int64_t)NG_REFUSED_KEEP_S * 1000)
		return true;
	for (size_t i = 0; i < pods->n; i++) {
		const struct ng_record *d = &pods->v[i]->d;

		if (!d->refused_file && d->pod.name[0] && !strcmp(d->pod.ns, p->d.pod.ns) &&
		    !strcmp(d->pod.name, p->d.pod.name) && d->at_ms >= p->d.at_ms)
			return true;
	}
	return false;
}

bool ng_opsdir_forget_deleted(ng_opod_vec *pods, int inotify_fd, const char *state_dir)
{
	char path[4600];
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	while ((n = read(inotify_fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
			char key[256];
			bool refused;

			off += (ssize_t)(sizeof(*ev) + ev->len);
			if (!(ev->mask & (IN_DELETE | IN_MOVED_FROM)) || ev->len == 0 ||
			    !ng_record_name(ev->name, key, sizeof(key), &refused))
				continue;
			/* A record exchanged for its successor (the agent's re-plan:
			 * state/record.h) moved out and in at once: still there. */
			snprintf(path, sizeof(path), "%s/" NG_PODS_DIR "/%s", state_dir, ev->name);
			if (access(path, F_OK) == 0)
				continue;
			for (size_t i = 0; i < pods->n; i++)
				if (!strcmp(pods->v[i]->d.key, key) &&
				    pods->v[i]->d.refused_file == refused) {
					ng_opsdir_drop(pods, i, "its decision record is gone (DEL)");
					changed = true;
					break;
				}
		}
	}
	return changed;
}

bool ng_opsdir_scan(ng_opod_vec *pods, const char *state_dir)
{
	char dir[4200], path[4600], key[256];
	int64_t now = ng_wall_ms();
	bool changed = false;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	d = opendir(dir);
	for (size_t i = 0; i < pods->n; i++)
		pods->v[i]->seen = false;
	while (d && (e = readdir(d))) {
		struct ng_opod *p;
		struct stat st;
		bool refused;

		if (!ng_record_name(e->d_name, key, sizeof(key), &refused) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		p = find(pods, key, refused);
		if (p && p->file_ino == (uint64_t)st.st_ino) {
			p->seen = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (p) { /* rewritten: a retried ADD */
			for (size_t i = 0; i < pods->n; i++)
				if (pods->v[i] == p)
					ng_opsdir_drop(pods, i, "its decision was rewritten");
		}
		p = ng_opod_load(path, (uint64_t)st.st_ino);
		if (p && ng_vec_push(pods, &p) < 0) // NOLINT(bugprone-sizeof-expression)
			ng_opod_free(p);
		else if (p && ng_opod_enforced(p))
			ng_opod_log("info", "pod_watched", p, "drift watch and metrics for %s", p->d.key);
		changed = true;
	}
	if (d)
		closedir(d);
	for (size_t i = pods->n; i-- > 0;) {
		struct ng_opod *p = pods->v[i];

		if (!p->seen) {
			ng_opsdir_drop(pods, i, "its decision record is gone (DEL)");
			changed = true;
		} else if (refused_stale(pods, p, now)) {
			snprintf(path, sizeof(path), "%s/%s" NG_REFUSED_SUFFIX, dir, p->d.key);
			unlink(path);
			ng_opsdir_drop(pods, i, "refused record aged out");
			changed = true;
		}
	}
	return changed;
}
