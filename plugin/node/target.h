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

/* getopt_long over `opts` (which holds NG_TARGET_OPTIONS), taking --netns
 * and --pid into `t`: returns the next other option, -1 at the end, or
 * NG_TARGET_BAD after printing why a --pid value is refused. */
#define NG_TARGET_BAD (-2)
int ng_target_getopt(struct ng_target *t, int argc, char **argv, const struct option *opts);

/* Resolves the target to a namespace path and opens it (checked to be a
 * network namespace other than the node's). Returns the fd, or -1 after
 * printing why to stderr, prefixed with the command. */
int ng_target_open(const struct ng_target *t, char *path, size_t len);

#endif
