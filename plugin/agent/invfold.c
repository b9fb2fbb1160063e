#include "agent/invfold.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ng_invfold_init(struct ng_invfold *f)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

static void fold_line(const char *line, size_t n, struct ng_invtotals *t)
{
	struct ng_inv inv;

	if (ng_inv_parse(line, n, &inv) == 0)
		ng_invtotals_add(t, &inv);
	else
		t->malformed++;
}

void ng_invfold_feed(struct ng_invfold *f, const char *buf, size_t n, struct ng_invtotals *t)
{
	const char *p = buf, *end = buf + n;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);

		if (f->partn + len > sizeof(f->part)) {
			/* Longer than any line we write: count it and resync at
			 * its newline. */
			if (nl)
				t->malformed++;
			f->partn = nl ? 0 : sizeof(f->part); /* stays poisoned until a newline */
			p += len;
			continue;
		}
		memcpy(f->part + f->partn, p, len);
		f->partn += len;
		p += len;
		if (nl) {
			fold_line(f->part, f->partn, t);
			f->partn = 0;
		}
	}
}

static void drain(struct ng_invfold *f, struct ng_invtotals *t)
{
	char buf[16384];
	ssize_t n;

	while ((n = pread(f->fd, buf, sizeof(buf), f->off)) > 0) {
		f->off += n;
		ng_invfold_feed(f, buf, (size_t)n, t);
	}
}

void ng_invfold_close(struct ng_invfold *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	f->off = 0;
	f->partn = 0;
	f->rotated_ms = 0;
}

void ng_invfold_run(struct ng_invfold *f, const char *state_dir, int64_t now_ms, struct ng_invtotals *t)
{
	char path[4200], old[4300];

	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, state_dir);
	/* At most twice: the renamed file's last read, then the new file. */
	for (int pass = 0; pass < 2; pass++) {
		if (f->fd < 0) {
			f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (f->fd < 0)
				return;
			f->off = 0;
		}
		drain(f, t);
		if (!f->rotated_ms)
			break;
		if (now_ms - f->rotated_ms < NG_INVFOLD_GRACE_MS)
			return;
		ng_invfold_close(f);
	}
	if (!f->rotated_ms && f->off >= NG_INVFOLD_ROTATE) {
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old) == 0)
			f->rotated_ms = now_ms ? now_ms : 1;
	}
}
