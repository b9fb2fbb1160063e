/* Who in a pod's network namespace can get around its ruleset: a process
 * that can use CAP_NET_ADMIN (it can delete the tables) or CAP_NET_RAW (its
 * AF_XDP sockets transmit past every hook the namespace has). Read from
 * /proc/PID/task/TID/status (every thread's: capabilities are per thread)
 * and /proc/PID/stat by `verify`; parsed and judged here,
 * with no I/O, so the rules are unit-tested without root. */
#ifndef NG_PROCCAPS_H
#define NG_PROCCAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

#define NG_CAP_NET_ADMIN 12
#define NG_CAP_NET_RAW   13

struct ng_proc {
	int pid;
	char name[32];            /* Name: (the kernel's comm; the process may set it) */
	uint64_t prm, bnd;        /* CapPrm, CapBnd */
	bool nnp;                 /* NoNewPrivs: exec can never add capabilities */
	unsigned long long start; /* starttime, field 22 of /proc/PID/stat */
};

typedef NG_VEC(struct ng_proc) ng_proc_vec;

/* Fills name, prm, bnd and nnp from the text of /proc/PID/status; -1 when
 * one of those lines is missing or malformed. */
int ng_proc_parse_status(const char *status, struct ng_proc *p);

/* The start time from the text of /proc/PID/stat (after the comm, which
 * may hold spaces and parentheses); -1 when malformed. */
int ng_proc_parse_start(const char *stat, unsigned long long *start);

enum ng_cap_reach {
	NG_CAP_NO,      /* neither permitted nor obtainable */
	NG_CAP_BY_EXEC, /* in the bounding set, and no_new_privs is off: a setuid or
			 * file-capability binary could grant it */
	NG_CAP_NOW,     /* permitted: the process can raise it and use it */
};
enum ng_cap_reach ng_proc_cap_reach(const struct ng_proc *p, int cap);

/* Capabilities belong to threads, not processes: capset(2) in one thread
 * (libcap's cap_set_proc) leaves the others theirs, and /proc/PID/status
 * shows only the leader's. Folds thread `t` (its /proc/PID/task/TID/status)
 * into `p` so that ng_proc_cap_reach(p) is the most any thread of the
 * process can reach: permitted in one of them is NG_CAP_NOW, in the
 * bounding set of one without no_new_privs is NG_CAP_BY_EXEC. The name
 * and pid stay p's. */
void ng_proc_merge_thread(struct ng_proc *p, const struct ng_proc *t);

/* The pod's infra ("pause") process, which the runtime starts to hold the
 * namespace and which runs no pod code: only the one the runtime names
 * (`sandbox_pid`, as the CRI reports it: `crictl inspectp` .info.pid), never
 * one guessed from its name or age (issue 13: any process that is the
 * oldest can call itself pause, and CRI-O without an infra container has
 * none). Returns its index, or -1 (sandbox_pid 0, or not among them). */
long ng_proc_infra(const struct ng_proc *v, size_t n, int sandbox_pid);

#endif
