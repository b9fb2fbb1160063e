#include "node/verify_caps.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/netns.h"
#include "node/proccaps.h"
#include "node/sockholders.h"
#include "policy/config.h"
#include "state/ready.h"

/* Reads /proc/PID/`file` into buf (NUL-terminated); -1 if gone. */
static int read_proc(int pid, const char *file, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static bool same_ns(const char *path, const struct stat *ns)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == ns->st_dev && st.st_ino == ns->st_ino;
}

/* Folds into p every thread of it whose network namespace is `ns`;
 * returns how many, or -1 (EPROTO) when a status is malformed. Gone in
 * between: not there to worry about. */
static int threads_in(struct ng_proc *p, const struct stat *ns)
{
	char dir[64], status[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", p->pid);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct ng_proc t = {0};
		char path[96], *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%ld/ns/net", dir, tid);
		if (!same_ns(path, ns))
			continue;
		snprintf(path, sizeof(path), "task/%ld/status", tid);
		if (read_proc(p->pid, path, status, sizeof(status)) < 0)
			continue;
		if (ng_proc_parse_status(status, &t) < 0) {
			closedir(d);
			errno = EPROTO;
			return -1;
		}
		t.pid = p->pid;
		if (n++ == 0)
			*p = t;
		else
			ng_proc_merge_thread(p, &t);
	}
	closedir(d);
	return n;
}

/* Every process with a thread whose network namespace is `ns` (same
 * device and inode; a thread may setns(2) on its own), its capabilities
 * those of its most capable such thread, its name and start time the
 * leader's. */
static int procs_in(const struct stat *ns, ng_proc_vec *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char status[4096], stat_text[1024];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct ng_proc p = {0}, leader = {0};
		char *end;
		int n;

		p.pid = (int)strtol(de->d_name, &end, 10);
		if (*end || p.pid <= 0)
			continue;
		n = threads_in(&p, ns);
		if (n < 0) {
			closedir(d);
			return -1;
		}
		/* Gone in between: not there to worry about. */
		if (n == 0 || read_proc(p.pid, "status", status, sizeof(status)) < 0 ||
		    read_proc(p.pid, "stat", stat_text, sizeof(stat_text)) < 0)
			continue;
		if (ng_proc_parse_status(status, &leader) < 0 ||
		    ng_proc_parse_start(stat_text, &p.start) < 0) {
			closedir(d);
			errno = EPROTO;
			return -1;
		}
		memcpy(p.name, leader.name, sizeof(p.name));
		if (ng_vec_push(out, &p) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

/* ---- held sockets ------------------------------------------------------------ */

struct ns_read {
	struct ng_nssocks *s;
	struct ng_err err;
	int rc;
};

static int read_in_ns(void *data)
{
	struct ns_read *x = data;

	x->rc = ng_nssocks_read(x->s, &x->err);
	return 0;
}

static int read_socks(int nsfd, struct ng_nssocks *s, struct ng_err *err)
{
	struct ns_read x = {.s = s};

	if (ng_netns_run(nsfd, read_in_ns, &x, err) < 0)
		return -1;
	if (x.rc < 0)
		*err = x.err;
	return x.rc;
}

/* The namespace's packet, raw and XDP sockets and who holds them. A listed
 * socket nobody was found holding is read again: kept in `orphans` only if
 * it still exists (one closed meanwhile held nothing). */
static int held_sockets(int nsfd, const struct stat *ns, struct ng_nssocks *s, struct ng_sockholders *h,
			ng_nssock_vec *orphans, struct ng_err *err)
{
	struct ng_nssocks again;
	bool unheld = false;

	if (read_socks(nsfd, s, err) < 0)
		return -1;
	if (ng_sockholders_find(s, ns, h, err) < 0) {
		ng_nssocks_free(s);
		return -1;
	}
	for (size_t i = 0; i < s->v.n; i++)
		unheld |= !ng_sockholders_hold(h, s->v.v[i].ino);
	if (!unheld)
		return 0;
	if (read_socks(nsfd, &again, err) < 0) {
		ng_sockholders_free(h);
		ng_nssocks_free(s);
		return -1;
	}
	for (size_t i = 0; i < s->v.n; i++)
		if (!ng_sockholders_hold(h, s->v.v[i].ino) && ng_nssock_find(&again.v, s->v.v[i].ino) &&
		    ng_vec_push(orphans, &s->v.v[i]) < 0)
			abort(); /* a CLI out of memory has nothing better to do */
	ng_nssocks_free(&again);
	return 0;
}

/* The node agent answers a refused DNS query through IPPROTO_RAW sockets it
 * opened in the pod's namespace (kernel/rawsend.h): send-only (nothing is
 * ever delivered to protocol 255), held by the process holding stateDir's
 * lock, outside the pod's namespace; no process of the pod can reach them.
 * Those holders, and only those, are taken out of `h` and named in `note`.
 * Any other socket of the agent's, or one a pod process holds too, counts. */
static void exempt_agent(const struct run *r, struct ng_sockholders *h, char *note, size_t len)
{
	int agent = ng_agent_pid(r->have_cfg ? r->cfg.state_dir : NG_DEFAULT_STATE_DIR);
	size_t kept = 0, exempt = 0;

	note[0] = '\0';
	if (agent <= 0)
		return;
	for (size_t i = 0; i < h->v.n; i++) {
		const struct ng_sockholder *x = &h->v.v[i];

		if (x->pid == agent && !x->in_ns && x->listed &&
		    (x->sock.kind == NG_SOCK_RAW || x->sock.kind == NG_SOCK_RAW6) &&
		    x->sock.proto == IPPROTO_RAW) {
			exempt++;
			continue;
		}
		h->v.v[kept++] = *x;
	}
	h->v.n = kept;
	if (exempt)
		snprintf(note, len,
			 "; not counted: %d (the node agent: %zu send-only IPPROTO_RAW socket%s that "
			 "answer refused DNS queries)",
			 agent, exempt, exempt == 1 ? "" : "s");
}

/* What verify found of held sockets, as the row's first sentence; "" when
 * none. Each of these fails the row whatever the capabilities say. */
static void describe_sockets(const struct run *r, const struct ng_nssocks *s, const struct ng_sockholders *h,
			     const ng_nssock_vec *orphans, char *out, size_t len)
{
	char list[260];
	long xdp;
	size_t o;

	out[0] = '\0';
	if (h->v.n || h->more) {
		ng_sock_describe_holders(h, r->o->sandbox_pid, list, sizeof(list));
		snprintf(out, len,
			 "held packet/raw/XDP sockets (they work whatever the holder's capabilities now): %s",
			 list);
	}
	if (orphans->n) {
		ng_sock_describe_socks(orphans, list, sizeof(list));
		o = strlen(out);
		snprintf(out + o, len - o, "%sheld by no process verify can see: %s", o ? "; " : "", list);
	}
	xdp = ng_sockholders_xdp_named(h);
	o = strlen(out);
	if (!s->xdp_listed && s->xdp_counted > xdp)
		snprintf(out + o, len - o,
			 "%s%ld AF_XDP socket%s of the namespace not named (this kernel lists none: no "
			 "CONFIG_XDP_SOCKETS_DIAG)",
			 o ? "; " : "", s->xdp_counted - xdp, s->xdp_counted - xdp == 1 ? "" : "s");
	o = strlen(out);
	if (s->capped)
		snprintf(out + o, len - o, "%smore than %d sockets in the namespace", o ? "; " : "",
			 NG_NSSOCK_MAX);
	o = strlen(out);
	if (h->unreadable)
		snprintf(out + o, len - o, "%scannot read the fds of %d%s in the namespace", o ? "; " : "",
			 h->unreadable_pid, h->unreadable > 1 ? " and others" : "");
}

void ng_verify_capabilities(struct run *r, int nsfd)
{
	static const char *check = "layer 2: no process can bypass it";
	ng_proc_vec v = {0};
	char now[300] = "", by_exec[300] = "", infra[400] = "", socks[360], agent[160];
	struct ng_nssocks s;
	struct ng_sockholders h;
	ng_nssock_vec orphans = {0};
	struct ng_err err = {0};
	struct stat ns;
	long inf;
	size_t checked = 0;
	bool named_pause = false;

	if (fstat(nsfd, &ns) < 0) {
		ng_vrow(r, check, NG_FAIL, -1, "fstat: %s", strerror(errno));
		return;
	}
	if (procs_in(&ns, &v) < 0) {
		ng_vrow(r, check, NG_FAIL, -1, "cannot read the processes of the namespace: %s",
			strerror(errno));
		ng_vec_free(&v);
		return;
	}
	if (held_sockets(nsfd, &ns, &s, &h, &orphans, &err) < 0) {
		ng_vrow(r, check, NG_FAIL, -1, "cannot list the packet, raw and XDP sockets: %s", err.msg);
		ng_vec_free(&v);
		return;
	}
	exempt_agent(r, &h, agent, sizeof(agent));
	describe_sockets(r, &s, &h, &orphans, socks, sizeof(socks));
	inf = ng_proc_infra(v.v, v.n, r->o->sandbox_pid);
	if (inf >= 0 && v.v)
		snprintf(infra, sizeof(infra),
			 "; capabilities not counted: %d (%s, --sandbox-pid: the infra container)",
			 v.v[inf].pid, v.v[inf].name);
	else if (r->o->sandbox_pid > 0)
		snprintf(infra, sizeof(infra), "; --sandbox-pid %d is not in this namespace",
			 r->o->sandbox_pid);
	for (size_t i = 0; v.v && i < v.n; i++) {
		const struct ng_proc *p = &v.v[i];
		enum ng_cap_reach raw = ng_proc_cap_reach(p, NG_CAP_NET_RAW),
				  admin = ng_proc_cap_reach(p, NG_CAP_NET_ADMIN);
		char *dst;
		size_t o;

		if ((long)i == inf)
			continue;
		checked++;
		named_pause |= !strcmp(p->name, "pause");
		if (raw == NG_CAP_NO && admin == NG_CAP_NO)
			continue;
		dst = raw == NG_CAP_NOW || admin == NG_CAP_NOW ? now : by_exec;
		o = strlen(dst);
		snprintf(dst + o, sizeof(now) - o, "%s%d (%s: %s%s%s)", o ? ", " : "", p->pid, p->name,
			 raw != NG_CAP_NO ? "NET_RAW" : "",
			 raw != NG_CAP_NO && admin != NG_CAP_NO ? ", " : "",
			 admin != NG_CAP_NO ? "NET_ADMIN" : "");
	}
	/* A process named pause is counted like any other: its name is its
	 * own choice. Say how to exempt the real one. */
	if (named_pause && r->o->sandbox_pid <= 0)
		snprintf(infra, sizeof(infra),
			 "; a process named pause is counted unless --sandbox-pid names it (the runtime's "
			 "sandbox pid)");
	/* The notes of what was not counted, together (infra's room is both's). */
	snprintf(infra + strlen(infra), sizeof(infra) - strlen(infra), "%s", agent);
	if (*socks)
		/* First: a held socket is the bypass itself, not a capability
		 * that might make one. */
		ng_vrow(r, check, NG_FAIL, -1, "%s%s%s%s%s%s", socks,
			*now ? "; can use NET_RAW or NET_ADMIN now: " : "", now,
			*by_exec ? "; could gain them by exec: " : "", by_exec, infra);
	else if (*now)
		ng_vrow(r, check, NG_FAIL, -1,
			"can use them now: %s. NET_RAW: AF_XDP frames pass no hook in the pod; NET_ADMIN: "
			"can "
			"delete the tables. Drop both%s",
			now, infra);
	else if (*by_exec)
		ng_vrow(r, check, NG_AMBIGUOUS, -1,
			"could gain them by running a setuid or file-capability binary (no_new_privs is "
			"off): "
			"%s; "
			"set allowPrivilegeEscalation: false or drop both%s",
			by_exec, infra);
	else
		ng_vrow(r, check, NG_PASS, -1,
			"%zu process%s in the namespace, none can use NET_RAW or NET_ADMIN, no packet, raw "
			"or "
			"XDP socket held%s%s",
			checked, checked == 1 ? "" : "es",
			s.xdp_listed ? "" : " (AF_XDP counted: this kernel lists none)", infra);
	ng_vec_free(&orphans);
	ng_sockholders_free(&h);
	ng_nssocks_free(&s);
	ng_vec_free(&v);
}
