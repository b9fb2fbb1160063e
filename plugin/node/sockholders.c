#include "node/sockholders.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "kernel/sockdiag.h"

/* ---- what the namespace lists (inside it) ---------------------------------- */

static int add_sock(struct ng_nssocks *s, const struct ng_nssock *k, struct ng_err *err)
{
	if (s->v.n >= NG_NSSOCK_MAX) {
		s->capped = true;
		return 0;
	}
	return ng_vec_push(&s->v, k) < 0 ? ng_fail(err, NG_E_INTERNAL, "out of memory") : 0;
}

/* Reads /proc/thread-self/net/`file` line by line: `each` for every line
 * after the first (the header, which must be there). A file that does not
 * exist names sockets this kernel cannot make (no IPv6: no raw6). */
static int read_net_file(const char *file,
			 int (*each)(struct ng_nssocks *, const char *, long, struct ng_err *),
			 struct ng_nssocks *s, struct ng_err *err)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long no = 0;
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/thread-self/net/%s", file);
	f = fopen(path, "re");
	if (!f && errno == ENOENT)
		return 0;
	if (!f)
		return ng_fail(err, NG_E_INTERNAL, "cannot read /proc/net/%s in the pod's namespace: %s",
			       file, strerror(errno));
	while (rc == 0 && getline(&line, &cap, f) >= 0)
		rc = each(s, line, ++no, err);
	if (rc == 0 && ferror(f))
		rc = ng_fail(err, NG_E_INTERNAL, "reading /proc/net/%s: %s", file, strerror(errno));
	else if (rc == 0 && no == 0)
		rc = ng_fail(err, NG_E_INTERNAL, "/proc/net/%s is empty (no header line)", file);
	if (rc < 0)
		ng_err_prefix(err, "/proc/net/%s: ", file);
	free(line);
	fclose(f);
	return rc;
}

static int list_line(struct ng_nssocks *s, enum ng_sock_kind kind, const char *line, long no,
		     struct ng_err *err)
{
	struct ng_nssock k;
	int got = ng_sock_parse_line(kind, line, &k);

	/* The header first and only there: anything else is a format this
	 * code does not know, which must not read as "no socket". */
	if (got < 0 || (got == 0) != (no == 1))
		return ng_fail(err, NG_E_INTERNAL, "line %ld is not in a format verify knows: %.*s", no,
			       (int)strcspn(line, "\n") > 120 ? 120 : (int)strcspn(line, "\n"), line);
	return got == 1 ? add_sock(s, &k, err) : 0;
}

static int packet_line(struct ng_nssocks *s, const char *line, long no, struct ng_err *err)
{
	return list_line(s, NG_SOCK_PACKET, line, no, err);
}

static int raw_line(struct ng_nssocks *s, const char *line, long no, struct ng_err *err)
{
	return list_line(s, NG_SOCK_RAW, line, no, err);
}

static int raw6_line(struct ng_nssocks *s, const char *line, long no, struct ng_err *err)
{
	return list_line(s, NG_SOCK_RAW6, line, no, err);
}

static int protocols_line(struct ng_nssocks *s, const char *line, long no, struct ng_err *err)
{
	enum ng_sock_kind kind;
	long count;
	int got = ng_sock_parse_protocols_line(line, &kind, &count);

	if (got < 0)
		return ng_fail(err, NG_E_INTERNAL, "line %ld is not in a format verify knows", no);
	if (got == 1 && kind == NG_SOCK_XDP)
		s->xdp_counted = count;
	return 0;
}

struct xdp_dump {
	struct ng_nssocks *s;
	struct ng_err *err;
};

static int xdp_one(const struct nlmsghdr *nlh, void *data)
{
	struct xdp_dump *d = data;
	struct ng_nssock k;

	if (ng_sock_parse_xdp_diag(nlh, &k) < 0)
		return ng_fail(d->err, NG_E_INTERNAL,
			       "a reply that is not an AF_XDP socket (type %u, %u bytes)", nlh->nlmsg_type,
			       nlh->nlmsg_len);
	return add_sock(d->s, &k, d->err);
}

int ng_nssocks_read(struct ng_nssocks *s, struct ng_err *err)
{
	struct xdp_dump d = {s, err};
	int rc;

	memset(s, 0, sizeof(*s));
	if (read_net_file("packet", packet_line, s, err) < 0 || read_net_file("raw", raw_line, s, err) < 0 ||
	    read_net_file("raw6", raw6_line, s, err) < 0 ||
	    read_net_file("protocols", protocols_line, s, err) < 0)
		goto fail;
	rc = ng_sockdiag_xdp(xdp_one, &d, err);
	if (rc == -1)
		goto fail;
	s->xdp_listed = rc == 0;
	ng_nssock_sort(&s->v);
	return 0;
fail:
	ng_nssocks_free(s);
	return -1;
}

void ng_nssocks_free(struct ng_nssocks *s)
{
	ng_vec_free(&s->v);
}

/* ---- who holds them (from the node) ---------------------------------------- */

struct scan {
	const struct ng_nssocks *s;
	const struct stat *ns;
	struct ng_sockholders *out;
	struct ng_err *err;
	int pid;
	char name[32]; /* read when the process is first found holding one */
	bool named;
	size_t first; /* holders before this index are not this pass's process */
};

static bool same_ns(const char *base, const struct stat *ns)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/ns/net", base);
	return stat(path, &st) == 0 && st.st_dev == ns->st_dev && st.st_ino == ns->st_ino;
}

/* The process's comm, printable: it is the process's own choice. */
static void comm_of(int pid, char *name, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, name, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = '?';
}

static int add_holder(struct scan *c, const struct ng_nssock *k, enum ng_hold how, bool in_ns, bool listed)
{
	struct ng_sockholder h = {.pid = c->pid, .sock = *k, .how = how, .in_ns = in_ns, .listed = listed};

	for (size_t i = c->first; i < c->out->v.n; i++)
		if (c->out->v.v[i].pid == c->pid && c->out->v.v[i].sock.ino == k->ino)
			return 0; /* a dup()ed fd, a thread sharing the table, also mapped */
	if (c->out->v.n >= NG_SOCKHOLDERS_MAX) {
		c->out->more++;
		return 0;
	}
	if (!c->named)
		comm_of(c->pid, c->name, sizeof(c->name));
	c->named = true;
	memcpy(h.name, c->name, sizeof(h.name));
	return ng_vec_push(&c->out->v, &h) < 0 ? ng_fail(c->err, NG_E_INTERNAL, "out of memory") : 0;
}

/* The sockets an io_uring keeps registered, listed in its fdinfo. Only the
 * namespace's listed ones can be told apart (no fd to ask the name of). */
static int scan_uring(struct scan *c, const char *base, const char *fd, bool in_ns)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	uint64_t ino;
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fdinfo/%s", base, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		const struct ng_nssock *k;

		if (ng_sock_uring_line(line, &ino) == 1 && (k = ng_nssock_find(&c->s->v, ino)))
			rc = add_holder(c, k, NG_HOLD_URING, in_ns, true);
	}
	free(line);
	fclose(f);
	return rc;
}

/* One fd table: base/fd (base "/proc/PID" or "/proc/PID/task/TID"). */
static int scan_fds(struct scan *c, const char *base, bool in_ns, enum ng_hold how)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/fd", base);
	d = opendir(dir);
	if (!d) {
		/* Gone meanwhile: nothing to hold. Not readable: a process of the
		 * namespace verify cannot judge. */
		if (in_ns && errno != ENOENT && errno != ESRCH) {
			c->out->unreadable++;
			c->out->unreadable_pid = c->pid;
		}
		return 0;
	}
	while (rc == 0 && (de = readdir(d))) {
		char link[64], path[PATH_MAX], proto[32];
		const struct ng_nssock *k;
		ssize_t n;
		uint64_t ino;
		int kind;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, "anon_inode:[io_uring]")) {
			rc = scan_uring(c, base, de->d_name, in_ns);
			continue;
		}
		if (ng_sock_link_inode(link, &ino) < 0)
			continue;
		if ((k = ng_nssock_find(&c->s->v, ino))) {
			rc = add_holder(c, k, how, in_ns, true);
			continue;
		}
		if (!in_ns)
			continue; /* another namespace's socket, held outside the pod */
		/* Not listed by the namespace, held in it: by its kind. */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
			continue;
		n = getxattr(path, "system.sockprotoname", proto, sizeof(proto));
		kind = n > 0 ? ng_sock_kind_of_protoname(proto, (size_t)n) : -1;
		if (kind >= 0)
			rc = add_holder(
				c,
				&(struct ng_nssock){.ino = ino, .kind = (enum ng_sock_kind)kind, .proto = -1},
				how, in_ns, false);
	}
	closedir(d);
	return rc;
}

/* The listed sockets the process has mapped (packet and AF_XDP rings). */
static int scan_maps(struct scan *c, const char *base, bool in_ns)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	uint64_t ino;
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/maps", base);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		const struct ng_nssock *k;

		if (ng_sock_maps_line(line, &ino) == 1 && (k = ng_nssock_find(&c->s->v, ino)))
			rc = add_holder(c, k, NG_HOLD_MAPPED, in_ns, true);
	}
	free(line);
	fclose(f);
	return rc;
}

/* Threads created without CLONE_FILES have fd tables of their own, which
 * /proc/PID/fd does not show. */
static int scan_threads(struct scan *c, const char *base)
{
	char dir[PATH_MAX];
	struct dirent *de;
	int rc = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/task", base);
	d = opendir(dir);
	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		char task[PATH_MAX];
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || tid == c->pid)
			continue;
		if ((size_t)snprintf(task, sizeof(task), "%s/%ld", dir, tid) >= sizeof(task))
			continue;
		rc = scan_fds(c, task, same_ns(task, c->ns), NG_HOLD_THREAD_FD);
	}
	closedir(d);
	return rc;
}

bool ng_sockholders_hold(const struct ng_sockholders *h, uint64_t ino)
{
	for (size_t i = 0; i < h->v.n; i++)
		if (h->v.v[i].sock.ino == ino)
			return true;
	return false;
}

long ng_sockholders_xdp_named(const struct ng_sockholders *h)
{
	long n = 0;

	for (size_t i = 0; i < h->v.n; i++) {
		const struct ng_sockholder *x = &h->v.v[i];
		bool seen = false;

		if (x->sock.kind != NG_SOCK_XDP || !x->in_ns)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = h->v.v[j].sock.ino == x->sock.ino;
		n += !seen;
	}
	return n;
}

/* After the fds: is any socket of the namespace still without a holder? */
static bool unaccounted(const struct ng_nssocks *s, const struct ng_sockholders *h)
{
	for (size_t i = 0; i < s->v.n; i++)
		if (!ng_sockholders_hold(h, s->v.v[i].ino))
			return true;
	return !s->xdp_listed && s->xdp_counted > ng_sockholders_xdp_named(h);
}

int ng_sockholders_find(const struct ng_nssocks *s, const struct stat *ns, struct ng_sockholders *out,
			struct ng_err *err)
{
	struct scan c = {.s = s, .ns = ns, .out = out, .err = err};
	DIR *d = opendir("/proc");
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return ng_fail(err, NG_E_INTERNAL, "cannot read /proc: %s", strerror(errno));
	/* Pass 1: every fd. Pass 2, only for what pass 1 did not find: the
	 * mappings and the threads' own fd tables. */
	for (int pass = 1; rc == 0 && pass <= 2; pass++) {
		struct dirent *de;

		if (pass == 2 && !unaccounted(s, out))
			break;
		rewinddir(d);
		while (rc == 0 && (de = readdir(d))) {
			char base[64], *end;
			long pid = strtol(de->d_name, &end, 10);
			bool in_ns;

			if (*end || pid <= 0 || pid > INT_MAX)
				continue;
			snprintf(base, sizeof(base), "/proc/%ld", pid);
			in_ns = same_ns(base, ns);
			if (!in_ns && s->v.n == 0)
				continue; /* nothing of the namespace's to match outside it */
			c.pid = (int)pid;
			c.first = pass == 1 ? out->v.n : 0;
			c.named = false;
			if (pass == 1)
				rc = scan_fds(&c, base, in_ns, NG_HOLD_FD);
			else if ((rc = scan_maps(&c, base, in_ns)) == 0)
				rc = scan_threads(&c, base);
		}
	}
	closedir(d);
	if (rc < 0)
		ng_sockholders_free(out);
	return rc;
}

void ng_sockholders_free(struct ng_sockholders *h)
{
	ng_vec_free(&h->v);
}
