#include "node/verify_caps.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/proccaps.h"

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

/* Every process whose network namespace is `ns` (same device and inode). */
static int procs_in(const struct stat *ns, ng_proc_vec *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char status[4096], stat_text[1024];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct ng_proc p = {0};
		struct stat st;
		char path[64];
		char *end;

		p.pid = (int)strtol(de->d_name, &end, 10);
		if (*end || p.pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/net", p.pid);
		if (stat(path, &st) < 0 || st.st_dev != ns->st_dev || st.st_ino != ns->st_ino)
			continue;
		/* Gone in between: not there to worry about. Unreadable: a
		 * row that cannot be judged must not pass. */
		if (read_proc(p.pid, "status", status, sizeof(status)) < 0 ||
		    read_proc(p.pid, "stat", stat_text, sizeof(stat_text)) < 0)
			continue;
		if (ng_proc_parse_status(status, &p) < 0 || ng_proc_parse_start(stat_text, &p.start) < 0) {
			closedir(d);
			errno = EPROTO;
			return -1;
		}
		if (ng_vec_push(out, &p) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

void ng_verify_capabilities(struct run *r, const struct stat *ns)
{
	static const char *check = "layer 2: no process can bypass it";
	ng_proc_vec v = {0};
	char now[300] = "", by_exec[300] = "", infra[160] = "";
	long inf;
	size_t checked = 0;
	bool named_pause = false;

	if (procs_in(ns, &v) < 0) {
		ng_vrow(r, check, NG_FAIL, -1, "cannot read the processes of the namespace: %s",
			strerror(errno));
		ng_vec_free(&v);
		return;
	}
	inf = ng_proc_infra(v.v, v.n, r->o->sandbox_pid);
	if (inf >= 0 && v.v)
		snprintf(infra, sizeof(infra), "; not counted: %d (%s, --sandbox-pid: the infra container)",
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
	if (*now)
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
			"%zu process%s in the namespace, none can use NET_RAW or NET_ADMIN%s", checked,
			checked == 1 ? "" : "es", infra);
	ng_vec_free(&v);
}
