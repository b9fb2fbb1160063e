/* The pod a node-side command looks at: --netns PATH or --pid PID. */
#ifndef NG_TARGET_H
#define NG_TARGET_H

#include <stddef.h>

/* Resolves the target to a namespace path and opens it (checked to be a
 * network namespace other than the node's). Returns the fd, or -1 after
 * printing why to stderr, prefixed with `cmd`. */
int ng_target_open(const char *cmd, const char *netns, int pid, char *path, size_t len);

#endif
