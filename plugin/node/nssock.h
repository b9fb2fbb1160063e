/* The sockets that get around a pod's ruleset whatever their holder's
 * capabilities are now: packet, raw IP and AF_XDP sockets. The kernel
 * checks CAP_NET_RAW only when one is created; a process that opened one
 * and then dropped every capability (and set no_new_privs, and became uid
 * 65534) keeps it, and a packet socket keeps reading frames the ingress
 * chain refuses, an AF_XDP socket keeps transmitting past every hook of the
 * namespace. verify (verify_caps.c, node/sockholders.c) lists them as the
 * pod's namespace shows them and finds who holds them; this file parses
 * what the kernel prints, with no I/O, so every format and every malformed
 * line is unit-tested without root. */
#ifndef NG_NSSOCK_H
#define NG_NSSOCK_H

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/vec.h"

enum ng_sock_kind {
	NG_SOCK_PACKET, /* AF_PACKET (and the obsolete AF_INET SOCK_PACKET, which is one) */
	NG_SOCK_RAW,    /* AF_INET SOCK_RAW, any protocol (IPPROTO_RAW included) */
	NG_SOCK_RAW6,   /* AF_INET6 SOCK_RAW */
	NG_SOCK_XDP,    /* AF_XDP */
	NG_SOCK_KINDS,
};

/* "packet", "raw", "raw6", "xdp": the names verify prints. */
const char *ng_sock_kind_name(enum ng_sock_kind k);

/* One socket of the namespace. */
struct ng_nssock {
	uint64_t ino;           /* the socket's inode: "socket:[INO]" in /proc/PID/fd */
	enum ng_sock_kind kind; /* packet, raw, raw6, xdp */
	int proto;              /* packet: the ethertype bound (0: none yet); raw: the IP
				 * protocol; xdp: -1 */
};

typedef NG_VEC(struct ng_nssock) ng_nssock_vec;

/* One line of /proc/net/packet (kind NG_SOCK_PACKET), /proc/net/raw
 * (NG_SOCK_RAW) or /proc/net/raw6 (NG_SOCK_RAW6), with or without its
 * newline. Returns 1 with *out filled for a socket, 0 for the header line
 * (the one whose first column is "sk" or "sl"), -1 for anything else: a
 * format this code does not know is never read as "no socket".
 *   packet: sk RefCnt Type Proto Iface R Rmem User Inode        (9 columns)
 *   raw:    sl local_address rem_address st tx_queue:rx_queue tr:tm->when
 *           retrnsmt uid timeout inode ref pointer drops        (13 columns)
 * A raw socket's "port" in local_address is its protocol. ICMP "ping"
 * sockets (SOCK_DGRAM, IPPROTO_ICMP) are in /proc/net/icmp, never here: they
 * are not counted. A raw socket of protocol 0 cannot exist (socket(2)
 * refuses it: EPROTONOSUPPORT). */
int ng_sock_parse_line(enum ng_sock_kind kind, const char *line, struct ng_nssock *out);

/* One line of /proc/net/protocols ("NAME size sockets memory ..."). The
 * count is per network namespace. Returns 1 with *kind and *count for the
 * lines of PACKET, RAW, RAWv6 and XDP; 0 for the header and every other
 * protocol; -1 for one of those four whose "sockets" column is not a
 * number. Used for AF_XDP where the kernel cannot list them
 * (CONFIG_XDP_SOCKETS_DIAG off). */
int ng_sock_parse_protocols_line(const char *line, enum ng_sock_kind *kind, long *count);

/* One reply message of a SOCK_DIAG_BY_FAMILY dump for AF_XDP (struct
 * xdp_diag_msg, linux/xdp_diag.h; the attributes after it are not read).
 * 0 with *out filled; -1 when it is not one: another type, shorter than
 * the header, another family, inode 0. */
int ng_sock_parse_xdp_diag(const struct nlmsghdr *nlh, struct ng_nssock *out);

/* A /proc/PID/fd link: 0 and *ino when it is exactly "socket:[INO]". */
int ng_sock_link_inode(const char *link, uint64_t *ino);

/* One line of /proc/PID/maps: 1 and *ino when it maps a socket (a packet
 * socket's ring, an AF_XDP socket's rings): the path is "socket:[INO]" and
 * the inode column says the same (a file that a process named
 * "socket:[1]" is not one); 0 otherwise; -1 when malformed. A packet
 * socket whose RX ring is mapped keeps receiving after its last fd is
 * closed. */
int ng_sock_maps_line(const char *line, uint64_t *ino);

/* One line of an io_uring fd's /proc/PID/fdinfo: its registered files are
 * listed as "%5u: PATH" and keep the socket open after close(fd). 1 and
 * *ino for "N: socket:[INO]", else 0. */
int ng_sock_uring_line(const char *line, uint64_t *ino);

/* The socket's protocol name as the kernel gives it
 * (getxattr "system.sockprotoname" on /proc/PID/fd/N): "PACKET", "RAW",
 * "RAWv6", "XDP" are the kinds above; any other name (TCP, UDP, PING,
 * NETLINK, UNIX, ...) is -1. `len` bytes, a trailing NUL allowed. */
int ng_sock_kind_of_protoname(const char *name, size_t len);

/* ---- who holds them (filled by node/sockholders.c) ---- */

enum ng_hold {
	NG_HOLD_FD,        /* an fd of the process */
	NG_HOLD_THREAD_FD, /* an fd of a thread with an fd table of its own */
	NG_HOLD_MAPPED,    /* mapped (its rings), maybe with no fd left */
	NG_HOLD_URING,     /* a registered file of an io_uring */
};

struct ng_sockholder {
	int pid;
	char name[32];         /* comm, unprintable bytes as '?' */
	struct ng_nssock sock; /* proto -1 when not listed */
	enum ng_hold how;
	bool in_ns;  /* the holder runs in the pod's namespace */
	bool listed; /* the namespace lists the socket; else known by its protocol name */
};

struct ng_sockholders {
	NG_VEC(struct ng_sockholder) v;
	size_t more;        /* found past NG_SOCKHOLDERS_MAX, not kept */
	size_t unreadable;  /* processes of the namespace whose fds could not be read */
	int unreadable_pid; /* one of them */
};

/* The holders as verify prints them, at most len - 1 bytes, "and N more"
 * past that: "PID (NAME: KIND[ protocol P][, how][, not listed by the
 * namespace][, outside the pod's namespace][, the --sandbox-pid]), ...". A
 * held socket is never exempt, not even the infra container's: nothing it
 * runs needs one. */
void ng_sock_describe_holders(const struct ng_sockholders *h, int sandbox_pid, char *buf, size_t len);

/* Sockets as "KIND socket:[INO], ..." (the same bound). */
void ng_sock_describe_socks(const ng_nssock_vec *v, char *buf, size_t len);

/* The sockets sorted by inode (then kind) and found by it: a namespace may
 * hold many, and every fd of every process is looked up. */
void ng_nssock_sort(ng_nssock_vec *v);
const struct ng_nssock *ng_nssock_find(const ng_nssock_vec *v, uint64_t ino);

#endif
