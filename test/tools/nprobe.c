/* nprobe: the e2e tests' network probe. One connection attempt, one line out.
 *
 *   nprobe tcp HOST PORT [TIMEOUT_MS]
 *       connected|refused|timeout|unreachable|denied|error <ms> [errno text]
 *   nprobe udp-dns SERVER NAME [TIMEOUT_MS]
 *   nprobe tcp-dns SERVER NAME [TIMEOUT_MS]
 *       answered <N> <ms> <A record>...   (N = number of A records)
 *       nxdomain|servfail|rcode<N>|refused|timeout|unreachable|denied|error <ms> [text]
 *
 * HOST/SERVER is a numeric IPv4 or IPv6 address (::ffff:a.b.c.d included).
 * Exit status 0 only for "connected" / "answered"; 1 for any failure kind;
 * 2 for bad usage. The time is measured around the attempt itself, so a
 * firewall's reject shows up as a fraction of a millisecond and a drop as the
 * full timeout. Non-blocking connect + poll keeps the timeout exact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 1000
#define DNS_MAX            65535

static struct timespec t0;

static double elapsed_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0.tv_sec) * 1e3 + (double)(now.tv_nsec - t0.tv_nsec) / 1e6;
}

/* Milliseconds left before the deadline, never negative. */
static int remaining_ms(int timeout_ms)
{
	double left = timeout_ms - elapsed_ms();

	return left > 0 ? (int)left + (left > (int)left) : 0;
}

/* The verdict for an errno from connect/send/recv. The kernel maps an ICMP
 * "administratively prohibited" to EHOSTUNREACH, and a netfilter drop of a
 * locally generated UDP packet to EPERM: both are the firewall talking. */
static const char *kind_of(int e)
{
	switch (e) {
	case ECONNREFUSED:
	case ECONNRESET: return "refused";
	case ETIMEDOUT: return "timeout";
	case ENETUNREACH:
	case EHOSTUNREACH:
	case EADDRNOTAVAIL: return "unreachable";
	case EPERM:
	case EACCES: return "denied";
	default: return "error";
	}
}

static int report_errno(int e)
{
	printf("%s %.2f %s\n", kind_of(e), elapsed_ms(), strerror(e));
	return 1;
}

static int report_timeout(void)
{
	printf("timeout %.2f\n", elapsed_ms());
	return 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: nprobe tcp HOST PORT [TIMEOUT_MS]\n"
			"       nprobe udp-dns SERVER NAME [TIMEOUT_MS]\n"
			"       nprobe tcp-dns SERVER NAME [TIMEOUT_MS]\n");
	return 2;
}

static int parse_timeout(const char *s, int *out)
{
	char *end;
	long v;

	if (!s) {
		*out = DEFAULT_TIMEOUT_MS;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 600000)
		return -1;
	*out = (int)v;
	return 0;
}

/* Numeric host + port into a sockaddr; no name lookups ever happen here. */
static int parse_addr(const char *host, const char *port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *ai = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc != 0 || !ai) {
		fprintf(stderr, "nprobe: %s port %s: %s\n", host, port, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

/* Starts a non-blocking connect and waits for it. Returns the connected fd,
 * or -1 after printing the failure line. */
static int connect_timed(const struct sockaddr_storage *ss, socklen_t len, int type, int timeout_ms)
{
	int fd = socket(ss->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct pollfd p;
	int soerr = 0, rc;
	socklen_t sl = sizeof(soerr);

	if (fd < 0) {
		report_errno(errno);
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)ss, len) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		report_errno(errno);
		close(fd);
		return -1;
	}
	p.fd = fd;
	p.events = POLLOUT;
	do
		rc = poll(&p, 1, remaining_ms(timeout_ms));
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		report_timeout();
		close(fd);
		return -1;
	}
	if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) {
		report_errno(errno);
		close(fd);
		return -1;
	}
	if (soerr) {
		report_errno(soerr);
		close(fd);
		return -1;
	}
	return fd;
}

static int cmd_tcp(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int timeout_ms, fd;

	if (argc < 2 || argc > 3 || parse_timeout(argc == 3 ? argv[2] : NULL, &timeout_ms) < 0)
		return usage();
	if (parse_addr(argv[0], argv[1], &ss, &len) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = connect_timed(&ss, len, SOCK_STREAM, timeout_ms);
	if (fd < 0)
		return 1;
	printf("connected %.2f\n", elapsed_ms());
	close(fd);
	return 0;
}

/* ---- DNS ------------------------------------------------------------------ */

/* A standard recursive query for NAME, type A, class IN. Returns its length. */
static int dns_build_query(const char *name, uint16_t id, unsigned char *q, size_t cap)
{
	size_t n = 12;
	const char *p = name;

	memset(q, 0, 12);
	q[0] = id >> 8;
	q[1] = id & 0xff;
	q[2] = 0x01; /* RD */
	q[5] = 1;    /* QDCOUNT */
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		if (l == 0 || l > 63 || n + l + 1 + 5 > cap)
			return -1;
		q[n++] = (unsigned char)l;
		memcpy(q + n, p, l);
		n += l;
		p += l;
		if (*p == '.')
			p++;
	}
	q[n++] = 0;
	q[n++] = 0;
	q[n++] = 1; /* QTYPE A */
	q[n++] = 0;
	q[n++] = 1; /* QCLASS IN */
	return (int)n;
}

/* Skips a possibly compressed name; returns the offset after it or -1. */
static long dns_skip_name(const unsigned char *m, size_t len, size_t off)
{
	while (off < len) {
		unsigned char l = m[off];

		if (l == 0)
			return (long)off + 1;
		if ((l & 0xc0) == 0xc0)
			return off + 2 <= len ? (long)off + 2 : -1;
		if (l & 0xc0)
			return -1;
		off += 1 + (size_t)l;
	}
	return -1;
}

/* Prints the verdict for a reply; returns the exit status. */
static int dns_report(const unsigned char *m, size_t len, uint16_t id)
{
	char addrs[4096] = "";
	size_t alen = 0;
	unsigned qd, an, rcode, found = 0;
	long off;

	if (len < 12 || ((m[0] << 8) | m[1]) != id || !(m[2] & 0x80)) {
		printf("error %.2f malformed or mismatched reply\n", elapsed_ms());
		return 1;
	}
	rcode = m[3] & 0x0f;
	if (rcode) {
		if (rcode == 3)
			printf("nxdomain %.2f\n", elapsed_ms());
		else if (rcode == 2)
			printf("servfail %.2f\n", elapsed_ms());
		else
			printf("rcode%u %.2f\n", rcode, elapsed_ms());
		return 1;
	}
	qd = (m[4] << 8) | m[5];
	an = (m[6] << 8) | m[7];
	off = 12;
	for (unsigned i = 0; i < qd && off >= 0; i++) {
		off = dns_skip_name(m, len, (size_t)off);
		if (off >= 0)
			off += 4;
	}
	for (unsigned i = 0; i < an && off >= 0; i++) {
		unsigned type, rdlen;

		off = dns_skip_name(m, len, (size_t)off);
		if (off < 0 || (size_t)off + 10 > len)
			break;
		type = (m[off] << 8) | m[off + 1];
		rdlen = (m[off + 8] << 8) | m[off + 9];
		off += 10;
		if ((size_t)off + rdlen > len)
			break;
		if (type == 1 && rdlen == 4) {
			char ip[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, m + off, ip, sizeof(ip));
			alen += (size_t)snprintf(addrs + alen, sizeof(addrs) - alen, " %s", ip);
			if (alen >= sizeof(addrs))
				alen = sizeof(addrs) - 1;
			found++;
		}
		off += rdlen;
	}
	printf("answered %u %.2f%s\n", found, elapsed_ms(), addrs);
	return 0;
}

/* Waits for fd to become readable; 0 ready, -1 after printing the failure. */
static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int rc;

	do
		rc = poll(&p, 1, remaining_ms(timeout_ms));
	while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return report_timeout(), -1;
	if (rc < 0)
		return report_errno(errno), -1;
	return 0;
}

static int dns_udp(const struct sockaddr_storage *ss, socklen_t sl, const unsigned char *q, int qlen,
		   uint16_t id, int timeout_ms)
{
	static unsigned char reply[DNS_MAX];
	int fd = connect_timed(ss, sl, SOCK_DGRAM, timeout_ms);
	ssize_t n;

	if (fd < 0)
		return 1;
	if (send(fd, q, (size_t)qlen, 0) < 0) {
		report_errno(errno);
		close(fd);
		return 1;
	}
	for (;;) {
		if (wait_readable(fd, timeout_ms) < 0) {
			close(fd);
			return 1;
		}
		n = recv(fd, reply, sizeof(reply), 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		break;
	}
	close(fd);
	if (n < 0)
		return report_errno(errno);
	return dns_report(reply, (size_t)n, id);
}

/* Reads exactly len bytes before the deadline; 0 or -1 after printing. */
static int read_full(int fd, unsigned char *buf, size_t len, int timeout_ms)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (wait_readable(fd, timeout_ms) < 0)
			return -1;
		n = recv(fd, buf + got, len - got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return report_errno(errno), -1;
		if (n == 0) {
			printf("error %.2f connection closed before the reply was complete\n", elapsed_ms());
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

static int dns_tcp(const struct sockaddr_storage *ss, socklen_t sl, const unsigned char *q, int qlen,
		   uint16_t id, int timeout_ms)
{
	static unsigned char reply[DNS_MAX];
	unsigned char msg[2 + 512], hdr[2];
	int fd = connect_timed(ss, sl, SOCK_STREAM, timeout_ms);
	size_t rlen;

	if (fd < 0)
		return 1;
	/* RFC 1035 4.2.2: a two-byte length, then the message. One send is
	 * fine for a query this small. */
	msg[0] = (unsigned char)(qlen >> 8);
	msg[1] = (unsigned char)(qlen & 0xff);
	memcpy(msg + 2, q, (size_t)qlen);
	if (send(fd, msg, (size_t)qlen + 2, MSG_NOSIGNAL) < 0) {
		report_errno(errno);
		close(fd);
		return 1;
	}
	if (read_full(fd, hdr, 2, timeout_ms) < 0) {
		close(fd);
		return 1;
	}
	rlen = (size_t)(hdr[0] << 8 | hdr[1]);
	if (read_full(fd, reply, rlen, timeout_ms) < 0) {
		close(fd);
		return 1;
	}
	close(fd);
	return dns_report(reply, rlen, id);
}

static int cmd_dns(int argc, char **argv, int tcp)
{
	unsigned char q[512];
	struct sockaddr_storage ss;
	socklen_t sl;
	int timeout_ms, qlen;
	uint16_t id;

	if (argc < 2 || argc > 3 || parse_timeout(argc == 3 ? argv[2] : NULL, &timeout_ms) < 0)
		return usage();
	if (parse_addr(argv[0], "53", &ss, &sl) < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	id = (uint16_t)((unsigned)t0.tv_nsec ^ (unsigned)getpid());
	qlen = dns_build_query(argv[1], id, q, sizeof(q));
	if (qlen < 0) {
		fprintf(stderr, "nprobe: %s: not a valid DNS name\n", argv[1]);
		return 2;
	}
	return tcp ? dns_tcp(&ss, sl, q, qlen, id, timeout_ms) : dns_udp(&ss, sl, q, qlen, id, timeout_ms);
}

int main(int argc, char **argv)
{
	/* One line per run, even when the caller pipes us. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	if (strcmp(argv[1], "tcp") == 0)
		return cmd_tcp(argc - 2, argv + 2);
	if (strcmp(argv[1], "udp-dns") == 0)
		return cmd_dns(argc - 2, argv + 2, 0);
	if (strcmp(argv[1], "tcp-dns") == 0)
		return cmd_dns(argc - 2, argv + 2, 1);
	return usage();
}
