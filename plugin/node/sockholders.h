/* Which processes hold a pod's packet, raw and AF_XDP sockets (see
 * node/nssock.h for why a held one matters whatever its holder's
 * capabilities are now). Two sources, joined:
 *   - what the pod's namespace lists: its own /proc/net/packet, raw, raw6
 *     (read inside it: /proc/thread-self/net follows the reading thread's
 *     namespace) and its AF_XDP sockets by sock_diag, matched against the
 *     fds of EVERY process verify can see, in whatever namespace it runs (an
 *     fd passed out of the pod still works);
 *   - the fds of the processes IN the pod's namespace, by the protocol name
 *     the kernel gives each socket (getxattr system.sockprotoname): a raw
 *     socket that called connect(AF_UNSPEC) leaves /proc/net/raw and still
 *     sends, and a kernel without CONFIG_XDP_SOCKETS_DIAG lists no AF_XDP
 *     socket at all (they are then counted from /proc/net/protocols).
 * A listed socket held by no fd is looked for in the processes' threads'
 * own fd tables, their mappings (a packet socket's mapped RX ring keeps
 * receiving after its last fd is closed) and their io_uring registered
 * files. What cannot be seen: a socket whose only holder is a process in a
 * PID namespace verify cannot read, or an fd in flight in a unix socket's
 * queue (such a socket is reported as held by no process verify can see). */
#ifndef NG_SOCKHOLDERS_H
#define NG_SOCKHOLDERS_H

#include <stdbool.h>
#include <sys/stat.h>

#include "base/err.h"
#include "node/nssock.h"

/* The most sockets read from one namespace, and the most holders kept: a
 * pod must not make verify use unbounded memory (past them it fails
 * anyway). */
#define NG_NSSOCK_MAX      65536
#define NG_SOCKHOLDERS_MAX 4096

struct ng_nssocks {
	ng_nssock_vec v;  /* sorted by inode */
	long xdp_counted; /* XDP sockets in the namespace (/proc/net/protocols) */
	bool xdp_listed;  /* sock_diag listed them (else they are only counted) */
	bool capped;      /* more than NG_NSSOCK_MAX: the rest were not read */
};

/* Reads the current namespace's sockets: call inside the pod's namespace
 * (ng_netns_run). -1 with err when a file is missing or in a format
 * node/nssock.c does not know. */
int ng_nssocks_read(struct ng_nssocks *s, struct ng_err *err);
void ng_nssocks_free(struct ng_nssocks *s);

/* Finds the holders of `s` (the namespace `ns`'s sockets) among every
 * process in /proc, and every packet, raw and XDP socket that the
 * processes in `ns` hold. -1 with err only when /proc cannot be read;
 * a process that ends meanwhile is skipped. */
int ng_sockholders_find(const struct ng_nssocks *s, const struct stat *ns, struct ng_sockholders *out,
			struct ng_err *err);
void ng_sockholders_free(struct ng_sockholders *h);

/* Whether some holder holds the socket `ino`. */
bool ng_sockholders_hold(const struct ng_sockholders *h, uint64_t ino);
/* How many distinct AF_XDP sockets processes in the namespace hold: where
 * the kernel lists none, what /proc/net/protocols counts beyond this is
 * held where verify cannot name it. */
long ng_sockholders_xdp_named(const struct ng_sockholders *h);

#endif
