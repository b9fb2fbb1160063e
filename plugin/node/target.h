/* The pod a node-side command looks at: --netns PATH or --pid PID, parsed
 * and opened the same way by every command (verify, stats, logs). */
#ifndef NG_TARGET_H
#define NG_TARGET_H

#include <getopt.h>
#include <stddef.h>

struct ng_target {
	const char *cmd;   /* "verify", for messages */
	const char *netns; /* --netns PATH */
	int pid;           /* --pid PID (a process in the pod) */
};

/* The two entries of a command's getopt_long table. */
#define NG_TARGET_OPTIONS                           \
	{"netns", required_argument, NULL, 'n'},    \
	{                                           \
		"pid", required_argument, NULL, 'p' \
	}

/* Takes getopt's option `c` when it is one of NG_TARGET_OPTIONS: returns 1
 * (taken), 0 (not ours) or -1 (bad value, printed). */
int ng_target_opt(struct ng_target *t, int c, const char *arg);

/* Resolves the target to a namespace path and opens it (checked to be a
 * network namespace other than the node's). Returns the fd, or -1 after
 * printing why to stderr, prefixed with the command. */
int ng_target_open(const struct ng_target *t, char *path, size_t len);

#endif
