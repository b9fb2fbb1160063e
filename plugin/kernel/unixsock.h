/* The agent's local socket (stateDir/agent.sock): a unix stream socket
 * only root reaches (mode 0600 in a root directory, and the peer's
 * credentials checked on accept), over which `observe` and `status
 * --names` ask the agent. Sockets are opened here only (HACKING.md). */
#ifndef NG_UNIXSOCK_H
#define NG_UNIXSOCK_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/err.h"

#define NG_AGENT_SOCK "agent.sock"

/* Listens on `path` (a stale socket file there is replaced; anything
 * else is an error), non-blocking, mode 0600. The fd, or -1 with err. */
int ng_unix_listen(const char *path, struct ng_err *err);
/* One waiting connection, non-blocking, with its peer's uid; -1 when
 * none (errno EAGAIN) or on error. */
int ng_unix_accept(int listen_fd, uid_t *peer_uid);
/* Connects to `path` (blocking). The fd, or -1 with err; *none true when
 * nobody listens there (no file, or refused): no agent serves. */
int ng_unix_connect(const char *path, bool *none, struct ng_err *err);

#endif
