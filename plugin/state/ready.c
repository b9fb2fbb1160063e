#include "state/ready.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fsutil.h"
#include "state/migrate.h"
#include "state/record.h"

static int subdir(const char *state_dir, const char *sub, struct ng_err *err)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/%s", state_dir, sub);
	return ng_dir_open(p, err);
}

/* Waits (bounded) until check(data) is true, looking every 100 us at
 * first, backing off to every 5 ms. Not inotify: closing an inotify
 * instance waits for an SRCU grace period (10-15 ms measured here), which
 * alone would cost ADD fifty times its budget; the agent has usually
 * written the file before ADD looks (it picks the pod up while ADD builds
 * the table). */
static bool wait_until(int timeout_ms, bool (*check)(void *), void *data)
{
	int64_t end = ng_mono_ms() + timeout_ms;
	useconds_t pause = 100;

	for (;;) {
		if (check(data))
			return true;
		if (ng_mono_ms() >= end)
			return false;
		usleep(pause);
		if (pause < 5000)
			pause *= 2;
	}
}

struct ready_ctx {
	const char *path, *nonce;
};

static bool ready_has_nonce(void *data)
{
	struct ready_ctx *c = data;
	char buf[NG_NONCE_LEN + 2] = {0};
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == NG_NONCE_LEN && memcmp(buf, c->nonce, NG_NONCE_LEN) == 0;
}

static bool ready_gone(void *data)
{
	struct ready_ctx *c = data;

	return access(c->path, F_OK) < 0 && errno == ENOENT;
}

int ng_record_wait_ready(const char *state_dir, const char *key, const char *nonce, int timeout_ms,
			 struct ng_err *err)
{
	char dir[4200], path[4500];
	struct ready_ctx c = {path, nonce};

	snprintf(dir, sizeof(dir), "%s/" NG_READY_DIR, state_dir);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (wait_until(timeout_ms, ready_has_nonce, &c))
		return 0;
	return ng_fail(err, NG_E_TRY_AGAIN,
		       "the node agent did not pick the pod up within %d ms (egress.names \"learn\": is the "
		       "boxxkite-netguard agent running, with stateDir %s?)",
		       timeout_ms, state_dir);
}

int ng_record_remove(const char *state_dir, const char *key, int wait_ms, struct ng_err *err)
{
	char dir[4200], path[4500], name[300];
	struct ready_ctx c = {path, NULL};
	int dfd;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	if (access(dir, F_OK) < 0)
		return 0; /* no state dir: nothing was ever recorded */
	dfd = ng_dir_open(dir, err);
	if (dfd < 0)
		return -1;
	snprintf(name, sizeof(name), "%s.json", key);
	/* No fsync: state under /run does not outlive a reboot. */
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
		int e = errno;

		close(dfd);
		return ng_fail(err, NG_E_INTERNAL, "stateDir %s: removing %s: %s", state_dir, name,
			       strerror(e));
	}
	close(dfd);
	/* 0.2's decision record of the pod, when no 0.3 agent migrated it. */
	snprintf(path, sizeof(path), "%s/" NG_V1_DECISIONS_DIR "/%s", state_dir, name);
	unlink(path);
	snprintf(dir, sizeof(dir), "%s/" NG_READY_DIR, state_dir);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	/* Best effort: only a serving agent removes ready files. */
	if (wait_ms > 0 && ng_agent_serving(state_dir) == 1)
		wait_until(wait_ms, ready_gone, &c);
	return 0;
}

int ng_record_set_ready(const char *state_dir, const char *key, const char *nonce, struct ng_err *err)
{
	int dfd = subdir(state_dir, NG_READY_DIR, err), rc;

	if (dfd < 0)
		return -1;
	rc = ng_write_volatile_at(dfd, key, nonce, strlen(nonce), 0644, err);
	close(dfd);
	return rc;
}

void ng_record_clear_ready(const char *state_dir, const char *key)
{
	char path[4500];

	snprintf(path, sizeof(path), "%s/" NG_READY_DIR "/%s", state_dir, key);
	unlink(path);
}

unsigned ng_record_sweep_ready(const char *state_dir, bool (*keep)(const char *name, void *data), void *data)
{
	struct ng_err err = {0};
	int dfd = subdir(state_dir, NG_READY_DIR, &err);
	unsigned gone = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (!keep(e->d_name, data) && unlinkat(dirfd(d), e->d_name, 0) == 0)
			gone++;
	}
	closedir(d);
	return gone;
}

int ng_agent_serving(const char *state_dir)
{
	char path[4200];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/" NG_AGENT_LOCK, state_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* A shared lock we can take means no agent holds the exclusive one. */
	rc = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK ? 1 : 0;
	close(fd);
	return rc;
}

/* The next blank-separated word of *p, advancing *p past it; its length. */
static size_t word(const char **p, const char **w)
{
	size_t n;

	*p += strspn(*p, " \t");
	*w = *p;
	n = strcspn(*p, " \t\n");
	*p += n;
	return n;
}

static bool is_word(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && !memcmp(w, s, n);
}

/* A number of `base` taking the whole of [w, w + n). */
static bool number(const char *w, size_t n, int base, unsigned long long *out)
{
	char buf[32], *end;

	if (n == 0 || n >= sizeof(buf) || w[0] == '-' || w[0] == '+')
		return false;
	memcpy(buf, w, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, base);
	return errno == 0 && *end == '\0';
}

/* A line of /proc/locks (fs/locks.c: lock_get_status):
 *   "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"
 * a blocked waiter's line reads "1: -> FLOCK ..." and holds nothing. */
int ng_locks_flock_holder(const char *line, unsigned maj, unsigned min, unsigned long long ino)
{
	const char *p = line, *w, *c1, *c2;
	unsigned long long pid, ma, mi, i;
	size_t n;

	word(&p, &w); /* "1:" */
	n = word(&p, &w);
	if (!is_word(w, n, "FLOCK"))
		return 0;
	word(&p, &w); /* ADVISORY / MANDATORY */
	n = word(&p, &w);
	if (!is_word(w, n, "WRITE"))
		return 0;
	n = word(&p, &w);
	if (!number(w, n, 10, &pid) || pid == 0 || pid > INT32_MAX)
		return 0;
	n = word(&p, &w); /* maj:min:ino */
	c1 = memchr(w, ':', n);
	c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - w)) : NULL;
	if (!c2 || !number(w, (size_t)(c1 - w), 16, &ma) || !number(c1 + 1, (size_t)(c2 - c1 - 1), 16, &mi) ||
	    !number(c2 + 1, n - (size_t)(c2 + 1 - w), 10, &i))
		return 0;
	return ma == maj && mi == min && i == ino ? (int)pid : 0;
}

int ng_agent_pid(const char *state_dir)
{
	char path[4200], *line = NULL;
	size_t cap = 0;
	struct stat st;
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/" NG_AGENT_LOCK, state_dir);
	if (stat(path, &st) < 0 || ng_agent_serving(state_dir) != 1)
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!pid && getline(&line, &cap, f) > 0)
		pid = ng_locks_flock_holder(line, major(st.st_dev), minor(st.st_dev),
					    (unsigned long long)st.st_ino);
	free(line);
	fclose(f);
	return pid;
}
