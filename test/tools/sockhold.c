/* sockhold: opens one packet, raw or AF_XDP socket while it has CAP_NET_RAW,
 * then gives up everything a process can give up and keeps the socket: for
 * e2e/verify.sh, which shows that verify names such a process (the kernel
 * checks NET_RAW only when the socket is made).
 *
 *   sockhold [--leave NETNS] KIND [IF]
 *
 * KIND: packet (AF_PACKET SOCK_RAW, all protocols; bound to IF if given),
 * packet-ring (the same with a mapped RX ring, its fd then closed: the
 * mapping alone keeps it receiving), raw (AF_INET, IPPROTO_RAW), raw6
 * (AF_INET6, IPPROTO_ICMPV6), raw-hidden (AF_INET, IPPROTO_UDP, then
 * connect(AF_UNSPEC), which takes it out of /proc/net/raw while it still
 * sends), xdp (AF_XDP, bound to IF in copy mode with a TX ring, ready to
 * transmit as test/tools/xsktx.c does; unbound without IF), packet-thread
 * (a packet socket in the fd table of a thread made without CLONE_FILES,
 * which /proc/PID/fd does not show), packet-uring (a packet socket
 * registered in an io_uring, its fd then closed; exit 3 "io_uring
 * unavailable" where the kernel refuses io_uring), ping (an ICMP "ping"
 * socket, which is not raw: the control), caps-thread (no socket: a thread
 * that keeps every capability while the main thread drops them, as
 * capset(2) in one thread leaves the others; "ready 0").
 * --leave NETNS: then move to the network namespace NETNS (the socket stays
 * in the one it was made in), as a process an fd was passed to would be.
 * Then: no_new_privs, every capability dropped from the bounding set,
 * ambient, inheritable, permitted and effective sets, uid and gid 65534,
 * no supplementary groups (in every thread); it checks all that in
 * /proc/self/status (and the thread's), prints
 * "ready INODE" (the socket's inode) and sleeps until killed. Exit 1 with
 * a line saying what failed. No library: linux/if_xdp.h and raw syscalls. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <linux/io_uring.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h> // IWYU pragma: keep (SYS_*: iwyu maps it to unistd.h, which does not define them)
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define RING     4
#define CHUNK    2048
#define UMEM_LEN (RING * CHUNK)

static int fail(const char *what)
{
	printf("%s failed: %s\n", what, strerror(errno));
	return -1;
}

static int open_xdp(const char *ifname)
{
	struct xdp_umem_reg reg = {0};
	struct sockaddr_xdp sa = {.sxdp_family = AF_XDP, .sxdp_flags = XDP_COPY};
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0), ring = RING;
	void *umem;

	if (fd < 0 || !ifname)
		return fd < 0 ? fail("socket") : fd;
	umem = mmap(NULL, UMEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED)
		return fail("mmap umem");
	reg.addr = (uintptr_t)umem;
	reg.len = UMEM_LEN;
	reg.chunk_size = CHUNK;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)) < 0)
		return fail("xdp ring setup");
	sa.sxdp_ifindex = if_nametoindex(ifname);
	if (!sa.sxdp_ifindex || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail("xdp bind");
	return fd;
}

static int open_packet(const char *ifname, bool ring)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	struct tpacket_req req = {
		.tp_block_size = 4096, .tp_block_nr = 1, .tp_frame_size = 2048, .tp_frame_nr = 2};

	if (fd < 0)
		return fail("socket");
	if (ifname) {
		struct sockaddr_ll sa = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};

		sa.sll_ifindex = (int)if_nametoindex(ifname);
		if (!sa.sll_ifindex || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			return fail("packet bind");
	}
	if (ring && (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0 ||
		     mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED))
		return fail("packet ring");
	return fd;
}

static int open_kind(const char *kind, const char *ifname)
{
	int fd;

	if (!strcmp(kind, "packet") || !strcmp(kind, "packet-ring"))
		return open_packet(ifname, !strcmp(kind, "packet-ring"));
	if (!strcmp(kind, "xdp"))
		return open_xdp(ifname);
	if (!strcmp(kind, "raw"))
		fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	else if (!strcmp(kind, "raw6"))
		fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	else if (!strcmp(kind, "ping"))
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
	else if (!strcmp(kind, "raw-hidden")) {
		struct sockaddr sa = {.sa_family = AF_UNSPEC};

		fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
		if (fd >= 0 && connect(fd, &sa, sizeof(sa)) < 0)
			return fail("connect(AF_UNSPEC)");
	} else {
		fprintf(stderr, "sockhold: unknown kind %s\n", kind);
		return -1;
	}
	return fd < 0 ? fail("socket") : fd;
}

/* Raw syscalls, not glibc's set*id (which reach only the threads glibc
 * made): a thread made by clone(2) drops its own credentials. */
static int drop_everything(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail("no_new_privs");
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return fail("bounding set");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return fail("ambient set");
	if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, 65534, 65534, 65534) < 0 ||
	    syscall(SYS_setresuid, 65534, 65534, 65534) < 0)
		return fail("uid/gid 65534");
	/* Leaving uid 0 cleared permitted and effective; inheritable too. */
	if (syscall(SYS_capset, &h, d) < 0)
		return fail("capset");
	return 0;
}

/* What the kernel now says of us: nothing left. */
static int check_dropped(const char *status)
{
	static const char *const want[] = {
		"CapInh:\t0000000000000000",        "CapPrm:\t0000000000000000",
		"CapEff:\t0000000000000000",        "CapBnd:\t0000000000000000",
		"CapAmb:\t0000000000000000",        "NoNewPrivs:\t1",
		"Uid:\t65534\t65534\t65534\t65534", "Gid:\t65534\t65534\t65534\t65534"};
	char buf[8192];
	ssize_t n;
	int fd = open(status, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fail(status);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(buf, want[i])) {
			printf("still privileged: no \"%s\" in %s\n", want[i], status);
			return -1;
		}
	return 0;
}

/* packet-thread: the socket lives in the fd table of a thread of ours
 * that has a table of its own (no CLONE_FILES). */
static struct {
	const char *ifname;
	int pipe;
	uint64_t ino;
} thr;

static int thread_main(void *arg)
{
	char ok = 0;
	struct stat st;
	int fd;

	if (arg) { /* caps-thread: keep everything */
		ok = 1;
		if (write(thr.pipe, &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	fd = open_packet(thr.ifname, false);
	if (fd >= 0 && fstat(fd, &st) == 0 && drop_everything() == 0) {
		thr.ino = st.st_ino;
		ok = 1;
	}
	if (write(thr.pipe, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int hold_in_thread(const char *ifname, bool keep_caps, uint64_t *ino)
{
	static char stack[256 * 1024] __attribute__((aligned(16)));
	char status[64], ok = 0;
	int p[2];
	long tid;

	if (pipe(p) < 0)
		return fail("pipe");
	thr.ifname = ifname;
	thr.pipe = p[1];
	tid = clone(thread_main, stack + sizeof(stack),
		    CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_FS | CLONE_SYSVSEM,
		    keep_caps ? (void *)&thr : NULL);
	if (tid < 0)
		return fail("clone");
	if (read(p[0], &ok, 1) != 1 || !ok) {
		printf("the thread could not open its socket or drop its privileges\n");
		return -1;
	}
	snprintf(status, sizeof(status), "/proc/self/task/%ld/status", tid);
	if (!keep_caps && check_dropped(status) < 0)
		return -1;
	*ino = thr.ino;
	return 0;
}

/* packet-uring: registered in an io_uring, then closed. */
static int hold_in_uring(int fd)
{
	struct io_uring_params p;
	long ring;

	memset(&p, 0, sizeof(p));
	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0 && (errno == ENOSYS || errno == EPERM || errno == EACCES)) {
		printf("io_uring unavailable: %s\n", strerror(errno));
		exit(3);
	}
	if (ring < 0)
		return fail("io_uring_setup");
	if (syscall(__NR_io_uring_register, (int)ring, IORING_REGISTER_FILES, &fd, 1) < 0)
		return fail("io_uring_register");
	close(fd); /* the ring holds it now */
	return 0;
}

int main(int argc, char **argv)
{
	const char *leave = NULL, *kind, *ifname;
	struct stat st;
	uint64_t ino = 0;
	int fd;

	if (argc > 2 && !strcmp(argv[1], "--leave")) {
		leave = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: sockhold [--leave NETNS] KIND [IF]\n");
		return 2;
	}
	kind = argv[1];
	ifname = argc == 3 ? argv[2] : NULL;
	if (!strcmp(kind, "packet-thread") || !strcmp(kind, "caps-thread")) {
		if (hold_in_thread(ifname, !strcmp(kind, "caps-thread"), &ino) < 0)
			return 1;
	} else {
		fd = open_kind(!strcmp(kind, "packet-uring") ? "packet" : kind, ifname);
		if (fd < 0 || fstat(fd, &st) < 0)
			return 1;
		ino = st.st_ino;
		if (!strcmp(kind, "packet-ring"))
			close(fd); /* the mapping holds it now */
		if (!strcmp(kind, "packet-uring") && hold_in_uring(fd) < 0)
			return 1;
	}
	if (leave) {
		int ns = open(leave, O_RDONLY | O_CLOEXEC);

		if (ns < 0 || setns(ns, CLONE_NEWNET) < 0) {
			fail("--leave");
			return 1;
		}
		close(ns);
	}
	if (drop_everything() < 0 || check_dropped("/proc/self/status") < 0)
		return 1;
	printf("ready %llu\n", (unsigned long long)ino);
	fflush(stdout);
	for (;;)
		pause();
}
