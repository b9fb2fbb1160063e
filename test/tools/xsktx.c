/* xsktx: writes one Ethernet frame (read from stdin) to interface IF through
 * an AF_XDP socket in copy mode, TX only, as a process holding CAP_NET_RAW
 * (and nothing else) in a container can. For e2e/packet.sh: AF_XDP's
 * generic transmit path (__dev_direct_xmit) does not pass the netdev egress
 * hook, so the packet-socket guard cannot hold these frames; the test shows
 * that, and that dropping NET_RAW (the README's advice) refuses the socket.
 *
 *   xsktx IF < frame
 *
 * Prints one line: "sent" (the kernel took the frame: the completion ring
 * returned it), "socket failed: ERR", "bind failed: ERR", ... Exit 0 when
 * sent, 1 otherwise. No library: the raw socket API of linux/if_xdp.h. */
#include <errno.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define RING     4    /* entries per ring (a power of two) */
#define CHUNK    2048 /* one frame per chunk */
#define UMEM_LEN (RING * CHUNK)

static int fail(const char *what)
{
	printf("%s failed: %s\n", what, strerror(errno));
	return 1;
}

static void *map_ring(int fd, const struct xdp_ring_offset *o, size_t desc_size, off_t pgoff, size_t *len)
{
	void *p;

	*len = o->desc + RING * desc_size;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	static uint8_t frame[CHUNK];
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	struct xdp_umem_reg reg = {0};
	struct sockaddr_xdp sa = {0};
	size_t n, tx_len, cq_len;
	int fd, ring = RING;
	uint8_t *umem, *tx, *cq;

	if (argc != 2) {
		fprintf(stderr, "usage: xsktx IF < frame\n");
		return 2;
	}
	n = fread(frame, 1, sizeof(frame), stdin);
	if (n < 14) {
		fprintf(stderr, "xsktx: no frame on stdin\n");
		return 2;
	}
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket");
	umem = mmap(NULL, UMEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED)
		return fail("mmap umem");
	reg.addr = (uintptr_t)umem;
	reg.len = UMEM_LEN;
	reg.chunk_size = CHUNK;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) < 0)
		return fail("umem register");
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring, sizeof(ring)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)) < 0)
		return fail("ring setup");
	if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen) < 0)
		return fail("mmap offsets");
	tx = map_ring(fd, &off.tx, sizeof(struct xdp_desc), XDP_PGOFF_TX_RING, &tx_len);
	cq = map_ring(fd, &off.cr, sizeof(uint64_t), (off_t)XDP_UMEM_PGOFF_COMPLETION_RING, &cq_len);
	if (!tx || !cq)
		return fail("ring mmap");
	sa.sxdp_family = AF_XDP;
	sa.sxdp_ifindex = if_nametoindex(argv[1]);
	sa.sxdp_queue_id = 0;
	sa.sxdp_flags = XDP_COPY; /* generic mode: any device, no XDP program */
	if (!sa.sxdp_ifindex)
		return fail("interface lookup");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail("bind");

	/* One descriptor: chunk 0 holds the frame. */
	memcpy(umem, frame, n);
	uint32_t *prod = (uint32_t *)(tx + off.tx.producer);
	struct xdp_desc *d = (struct xdp_desc *)(tx + off.tx.desc);
	uint32_t p = __atomic_load_n(prod, __ATOMIC_ACQUIRE);
	d[p & (RING - 1)] = (struct xdp_desc){.addr = 0, .len = (uint32_t)n, .options = 0};
	__atomic_store_n(prod, p + 1, __ATOMIC_RELEASE);
	if (sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN && errno != ENOBUFS)
		return fail("send");

	/* Completed: the kernel transmitted (or dropped past the hook) it. */
	uint32_t *cprod = (uint32_t *)(cq + off.cr.producer);
	for (int i = 0; i < 100; i++) {
		if (__atomic_load_n(cprod, __ATOMIC_ACQUIRE) != 0) {
			printf("sent\n");
			return 0;
		}
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
	}
	printf("not completed within 500 ms\n");
	return 1;
}
