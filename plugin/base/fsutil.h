/* The installer's file operations. It runs as root on every node, writing
 * into host directories that other software also writes, so every call
 * works relative to a directory opened once (no path is resolved twice),
 * never follows a symlink, never writes in place: a reader (containerd,
 * CRI-O, the kernel exec'ing a plugin) sees the old file or the new one,
 * never half of one. Functions return 0 or -1 with err. */
#ifndef NG_FSUTIL_H
#define NG_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"

/* Opens a directory for *at() calls. Refuses a symlink as the last path
 * component, a directory others can write to (they could plant files we
 * would then trust or replace), and one owned by anyone but us or root. */
int ng_dir_open(const char *path, struct ng_err *err);

/* Reads a regular file (no symlink, no FIFO) of at most `max` bytes. The
 * buffer gets a trailing NUL; free() it. `st` may be NULL. */
int ng_read_at(int dirfd, const char *name, size_t max, char **text, size_t *len, struct stat *st,
	       struct ng_err *err);

/* Replaces `name` atomically: a new temp file in the same directory
 * (O_EXCL, random name that runtimes never read as a config), written,
 * chmod'ed, fsync'ed, renamed over `name`, then the directory fsync'ed so
 * the rename survives a crash. On failure the temp file is removed and
 * `name` is untouched.
 *
 * With `expect`, `name` must still be what the caller planned from (the
 * same bytes, or absent): a primary CNI that rewrote its config meanwhile
 * must not lose its write to ours. Absent is checked atomically
 * (RENAME_NOREPLACE); present by RENAME_EXCHANGE, compare, and exchange back
 * if it differs. Otherwise nothing is replaced and the error is code 11
 * (plan again). */
struct ng_expect {
	bool exists;
	const char *text; /* when exists; NULL: not a regular file, nothing to compare */
	size_t len;
	/* when exists and not 0: compare the file's inode instead of its bytes
	 * (a file that is only ever replaced by rename, never written in place:
	 * the same inode is the same file) */
	unsigned long long ino;
};
int ng_write_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
		const struct ng_expect *expect, struct ng_err *err);

/* The same without fsync and without `expect`: atomic (a reader sees the
 * old file or the new one) but not durable, for runtime state under /run
 * that a reboot discards anyway (the agent's state records). */
int ng_write_volatile_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
			 struct ng_err *err);
/* ... with `expect` (ng_write_at's rule: code 11, nothing replaced, when
 * `name` is no longer what the caller planned from). */
int ng_write_volatile_expect_at(int dirfd, const char *name, const void *data, size_t len, unsigned mode,
				const struct ng_expect *expect, struct ng_err *err);

/* Removes `name` (not a directory) and fsyncs the directory; a missing
 * file is success. With `expect`, only if it still holds those bytes
 * (code 11 otherwise, nothing removed). */
int ng_remove_at(int dirfd, const char *name, const struct ng_expect *expect, struct ng_err *err);

/* Reads a whole file given by path (e.g. /proc/self/exe, a mounted
 * ConfigMap key, which is a symlink into ..data and is followed). */
int ng_read_path(const char *path, size_t max, char **text, size_t *len, struct ng_err *err);

#endif
