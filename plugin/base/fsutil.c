#include "base/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int ng_dir_open(const char *path, struct ng_err *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR) {
			struct stat lst;

			if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
				return ng_fail(
					err, NG_E_CONFIG,
					"%s is a symlink; refusing to follow it (give the real directory)",
					path);
		}
		return ng_fail(err, NG_E_CONFIG, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return ng_fail(err, NG_E_INTERNAL, "%s: %s", path, strerror(e));
	}
	if (st.st_mode & S_IWOTH) {
		close(fd);
		return ng_fail(err, NG_E_CONFIG,
			       "%s is writable by every user (mode %04o); refusing to write there", path,
			       (unsigned)(st.st_mode & 07777));
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		close(fd);
		return ng_fail(err, NG_E_CONFIG,
			       "%s is owned by uid %u, not root nor us; refusing to write there", path,
			       (unsigned)st.st_uid);
	}
	return fd;
}

/* Reads everything from fd, at most max bytes. */
static int read_all(int fd, const char *what, size_t max, char **text, size_t *len, struct ng_err *err)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap + 1), *nb;

	if (!buf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap >= max + 1) {
				free(buf);
				return ng_fail(err, NG_E_CONFIG, "%s: larger than %zu bytes", what, max);
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				return ng_fail(err, NG_E_INTERNAL, "out of memory");
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			return ng_fail(err, NG_E_INTERNAL, "%s: read: %s", what, strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(buf);
		return ng_fail(err, NG_E_CONFIG, "%s: larger than %zu bytes", what, max);
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int ng_read_at(int dirfd, const char *name, size_t max, char **text, size_t *len, struct stat *st,
	       struct ng_err *err)
{
	struct stat s;
	/* O_NONBLOCK: a FIFO planted under a config name must not hang us. */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), rc;

	if (fd < 0)
		return ng_fail(err, errno == ENOENT ? NG_E_TRY_AGAIN : NG_E_CONFIG, "%s: %s", name,
			       errno == ELOOP ? "is a symlink; refusing to follow it" : strerror(errno));
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
		close(fd);
		return ng_fail(err, NG_E_CONFIG, "%s: not a regular file", name);
	}
	rc = read_all(fd, name, max, text, len, err);
	close(fd);
	if (rc == 0 && st)
		*st = s;
	return rc;
}

int ng_read_path(const char *path, size_t max, char **text, size_t *len, struct ng_err *err)
{
	struct stat s;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), rc;

	if (fd < 0)
		return ng_fail(err, NG_E_CONFIG, "%s: %s", path, strerror(errno));
	if (fstat(fd, &s) < 0 || !S_ISREG(s.st_mode)) {
		close(fd);
		return ng_fail(err, NG_E_CONFIG, "%s: not a regular file", path);
	}
	rc = read_all(fd, path, max, text, len, err);
	close(fd);
	return rc;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t w = write(fd, data, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		data += w;
		len -= (size_t)w;
	}
	return 0;
}

/* A name no runtime reads as a config (extension .tmp) and no other
 * process can have made for us to open: O_EXCL on a random name. */
static int open_temp(int dirfd, char *name, size_t n)
{
	for (int tries = 0; tries < 16; tries++) {
		unsigned char r[8];
		int fd;

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		snprintf(name, n, ".boxxkite-netguard.%02x%02x%02x%02x%02x%02x%02x%02x.tmp", r[0], r[1], r[2],
			 r[3], r[4], r[5], r[6], r[7]);
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* Does `name` still hold what `e` says? */
static bool still(int dirfd, const char *name, const struct ng_expect *e)
{
	struct ng_err ignore = {0};
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	bool same;

	if (!e->exists)
		return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	if (e->ino)
		return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       (unsigned long long)st.st_ino == e->ino;
	if (!e->text)
		return true; /* listed but not a regular file: no bytes to compare */
	if (ng_read_at(dirfd, name, e->len + 1, &text, &len, NULL, &ignore) < 0)
		return false;
	same = text && len == e->len && memcmp(text, e->text, len) == 0;
	free(text);
	return same;
}

/* Puts `tmp` in `name`'s place only if `name` still holds what `e` says.
 * Absent: RENAME_NOREPLACE, atomic. Present: RENAME_EXCHANGE, then the file
 * swapped out (now named `tmp`) is compared and swapped back if another
 * writer had changed it, so the only window left is a write landing between
 * the two exchanges. A filesystem without these flags (EINVAL) gets the
 * compare-then-rename. Returns 0 (replaced; `tmp` is gone), 1 (changed:
 * nothing replaced, `tmp` holds ours), -1 (errno; `tmp` holds ours), or -2
 * (the swap back failed: `tmp` holds the other writer's file; keep it). */
static int replace_checked(int dirfd, const char *tmp, const char *name, const struct ng_expect *e)
{
	if (!e->exists) {
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EEXIST)
			return 1;
		if (errno != EINVAL)
			return -1;
	} else if (e->text || e->ino) {
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
			if (still(dirfd, tmp, e)) {
				unlinkat(dirfd, tmp, 0);
				return 0;
			}
			return renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0 ? 1 : -2;
		}
		if (errno == ENOENT)
			return 1; /* removed meanwhile */
		if (errno != EINVAL)
			return -1;
	}
	if (!still(dirfd, name, e))
		return 1;
	return renameat(dirfd, tmp, dirfd, name) < 0 ? -1 : 0;
}

static int write_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
		    const struct ng_expect *expect, bool durable, struct ng_err *err);

int ng_write_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
		const struct ng_expect *expect, struct ng_err *err)
{
	return write_at(dirfd, name, data, len, mode, expect, true, err);
}

int ng_write_volatile_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
			 struct ng_err *err)
{
	return write_at(dirfd, name, data, len, mode, NULL, false, err);
}

int ng_write_volatile_expect_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
				const struct ng_expect *expect, struct ng_err *err)
{
	return write_at(dirfd, name, data, len, mode, expect, false, err);
}

static int write_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
		    const struct ng_expect *expect, bool durable, struct ng_err *err)
{
	char tmp[64];
	const char *step = "create a temp file";
	int fd = open_temp(dirfd, tmp, sizeof(tmp)), e;

	if (fd < 0)
		return ng_fail(err, NG_E_INTERNAL, "%s: cannot %s: %s", name, step, strerror(errno));
	step = "write";
	if (write_all(fd, data, len) < 0)
		goto fail;
	step = "chmod"; /* explicit: the umask must not decide a node's file modes */
	if (fchmod(fd, mode & 07777) < 0)
		goto fail;
	step = "fsync";
	if (durable && fsync(fd) < 0)
		goto fail;
	step = "close";
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	step = "rename";
	if (expect) {
		int rc = replace_checked(dirfd, tmp, name, expect);

		if (rc == 1) {
			unlinkat(dirfd, tmp, 0);
			return ng_fail(err, NG_E_TRY_AGAIN,
				       "%s changed while it was being rewritten (another writer)", name);
		}
		if (rc == -2)
			return ng_fail(
				err, NG_E_INTERNAL,
				"%s changed while it was being rewritten, and putting it back failed (%s): "
				"the other writer's file is in %s",
				name, strerror(errno), tmp);
		if (rc < 0)
			goto fail;
	} else if (renameat(dirfd, tmp, dirfd, name) < 0) {
		goto fail;
	}
	/* The rename is durable once the directory is. */
	if (durable && fsync(dirfd) < 0)
		return ng_fail(err, NG_E_INTERNAL, "%s: fsync of the directory: %s", name, strerror(errno));
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return ng_fail(err, NG_E_INTERNAL, "%s: %s: %s", name, step, strerror(e));
}

int ng_remove_at(int dirfd, const char *name, const struct ng_expect *expect, struct ng_err *err)
{
	if (expect && !still(dirfd, name, expect))
		return ng_fail(err, NG_E_TRY_AGAIN, "%s changed before it could be removed (another writer)",
			       name);
	if (unlinkat(dirfd, name, 0) < 0) {
		if (errno == ENOENT)
			return 0;
		return ng_fail(err, NG_E_INTERNAL, "%s: remove: %s", name, strerror(errno));
	}
	if (fsync(dirfd) < 0)
		return ng_fail(err, NG_E_INTERNAL, "%s: fsync of the directory: %s", name, strerror(errno));
	return 0;
}
