/* dnsload: many pods' resolvers and applications at once, for the soak
 * (e2e/soak.sh). One thread per pod, each inside the pod's network
 * namespace (setns applies to the calling thread only), so 200 pods cost
 * one process and a few hundred KiB, not 200 interpreters.
 *
 *   dnsload client [--server A] [--port N] [--names K] [--first F]
 *                  [--period-ms P] [--count N] [--timeout-ms T] [--tries N]
 *                  --out FILE NETNS@LABEL@PATTERN...
 *     Each pod asks SERVER (UDP) for the A record of PATTERN (%d: the name's
 *     index, F + i % K), and the moment the answer is in connects to the
 *     address on PORT (TCP); then connects once more to the address of its
 *     previous answer, still within the name's lifetime (an application
 *     reusing what it resolved). One line per query, appended to FILE:
 *       START_MS LABEL LAT_US CONNECT PREVIOUS NAME ADDR PREV_AGE_MS
 *     START_MS the realtime clock at the first send; LAT_US from it to the answer (-1: no answer after TRIES
 *     attempts of T ms each); CONNECT and PREVIOUS are ok, refused, timeout,
 *     noanswer or - (nothing to reconnect to); PREV_AGE_MS how long ago the
 *     previous answer came (-1: none). Runs until SIGTERM or COUNT
 *     queries per pod; the first query of each pod after a random fraction
 *     of P.
 *   dnsload flood --server A --rate R [--suffix S] NETNS
 *     Sends R queries per second (UDP, not waiting) for synthesized names
 *     a-b-c-d.S (10.22.0.0/16, never the same twice in a row) and counts
 *     answers; on SIGTERM prints "sent N answered M".
 *   dnsload sink PORT
 *     Accepts TCP connections on [::]:PORT (and IPv4) and closes each at
 *     once, without a process per connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A query for NAME's A record with id ID into q; its length. */
static size_t query(uint8_t *q, size_t cap, const char *name, uint16_t id)
{
	size_t n = 12;
	const char *s = name;

	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8), q[1] = (uint8_t)id, q[2] = 1, q[5] = 1;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);

		if (l == 0 || l > 63 || n + l + 6 > cap)
			return 0;
		q[n++] = (uint8_t)l;
		memcpy(q + n, s, l);
		n += l;
		s += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1, q[n++] = 0, q[n++] = 1;
	return n;
}

static size_t skip_name(const uint8_t *m, size_t len, size_t off)
{
	while (off < len) {
		if (m[off] == 0)
			return off + 1;
		if ((m[off] & 0xC0) == 0xC0)
			return off + 2;
		off += 1 + (size_t)m[off];
	}
	return len + 1;
}

/* The first A record of answer M to query ID, into *a; 0 when there is one. */
static int first_a(const uint8_t *m, size_t len, uint16_t id, struct in_addr *a)
{
	size_t off = 12;
	unsigned qd, an;

	if (len < 12 || ((m[0] << 8) | m[1]) != id || !(m[2] & 0x80))
		return -1;
	qd = (unsigned)(m[4] << 8 | m[5]), an = (unsigned)(m[6] << 8 | m[7]);
	for (unsigned i = 0; i < qd; i++)
		off = skip_name(m, len, off) + 4;
	for (unsigned i = 0; i < an && off + 10 <= len; i++) {
		unsigned type, rdlen;

		off = skip_name(m, len, off);
		if (off + 10 > len)
			break;
		type = (unsigned)(m[off] << 8 | m[off + 1]);
		rdlen = (unsigned)(m[off + 8] << 8 | m[off + 9]);
		off += 10;
		if (type == 1 && rdlen == 4 && off + 4 <= len) {
			memcpy(a, m + off, 4);
			return 0;
		}
		off += rdlen;
	}
	return -1;
}

static int enter(const char *netns)
{
	int fd = open(netns, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

/* ---- client ------------------------------------------------------------- */

struct opts {
	struct sockaddr_in server;
	int port, names, first, period_ms, count, timeout_ms, tries, out;
};

struct pod {
	const struct opts *o;
	char netns[512], label[64], pattern[192];
	pthread_t th;
};

/* The answer's address for NAME, LAT_US from the first send; -1: none. */
static int resolve(const struct opts *o, const char *name, struct in_addr *a, int64_t *lat_us)
{
	uint8_t q[300], m[4096];
	int64_t t0 = mono_us();

	for (int t = 0; t < o->tries && !stop; t++) {
		uint16_t id = (uint16_t)random();
		size_t len = query(q, sizeof(q), name, id);
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		int64_t until = mono_us() + (int64_t)o->timeout_ms * 1000;

		if (fd < 0 || len == 0 ||
		    sendto(fd, q, len, 0, (const struct sockaddr *)&o->server, sizeof(o->server)) < 0) {
			if (fd >= 0)
				close(fd);
			usleep((useconds_t)o->timeout_ms * 1000);
			continue;
		}
		for (int64_t now = mono_us(); now < until && !stop; now = mono_us()) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			ssize_t n;

			if (poll(&p, 1, (int)((until - now) / 1000) + 1) <= 0)
				continue;
			n = recv(fd, m, sizeof(m), 0);
			if (n > 0 && first_a(m, (size_t)n, id, a) == 0) {
				*lat_us = mono_us() - t0;
				close(fd);
				return 0;
			}
		}
		close(fd);
	}
	return -1;
}

static const char *connect_to(const struct opts *o, struct in_addr a)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port), .sin_addr = a};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	const char *r = "timeout";
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int e = 0;
	socklen_t el = sizeof(e);

	if (fd < 0)
		return "error";
	if (connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) == 0) {
		r = "ok";
	} else if (errno != EINPROGRESS) {
		r = "refused";
	} else if (poll(&p, 1, 2000) == 1) {
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
		r = e == 0 ? "ok" : e == ETIMEDOUT ? "timeout" : "refused";
	}
	close(fd);
	return r;
}

static void *client(void *arg)
{
	struct pod *p = arg;
	const struct opts *o = p->o;
	struct in_addr prev = {0};
	int64_t prev_us = -1;

	if (enter(p->netns) < 0) {
		dprintf(o->out, "%lld %s -1 enter-failed - %s -\n", (long long)real_ms(), p->label, p->netns);
		return NULL;
	}
	usleep((useconds_t)(random() % (o->period_ms + 1)) * 1000);
	for (int i = 0; (o->count == 0 || i < o->count) && !stop; i++) {
		char name[256], addr[INET_ADDRSTRLEN] = "-", line[512];
		struct in_addr a;
		int64_t t0 = mono_us(), start = real_ms(), lat = -1, left, age = -1;
		const char *c = "noanswer", *pc = "-";

		snprintf(name, sizeof(name), p->pattern, o->first + i % o->names);
		if (resolve(o, name, &a, &lat) == 0) {
			c = connect_to(o, a);
			inet_ntop(AF_INET, &a, addr, sizeof(addr));
		}
		if (stop)
			break;
		if (prev_us >= 0) {
			age = (mono_us() - prev_us) / 1000;
			pc = connect_to(o, prev);
		}
		if (lat >= 0)
			prev = a, prev_us = t0 + lat;
		/* One write, O_APPEND: lines of many threads never interleave. */
		snprintf(line, sizeof(line), "%lld %s %lld %s %s %s %s %lld\n", (long long)start, p->label,
			 (long long)lat, c, pc, name, addr, (long long)age);
		if (write(o->out, line, strlen(line)) < 0)
			break;
		left = (int64_t)o->period_ms * 1000 - (mono_us() - t0);
		if (left > 0 && !stop && (o->count == 0 || i + 1 < o->count))
			usleep((useconds_t)left);
	}
	return NULL;
}

static int parse_pod(struct pod *p, const char *spec)
{
	const char *a = strchr(spec, '@'), *b = a ? strchr(a + 1, '@') : NULL;

	if (!b || (size_t)(a - spec) >= sizeof(p->netns) || (size_t)(b - a - 1) >= sizeof(p->label) ||
	    strlen(b + 1) >= sizeof(p->pattern))
		return -1;
	snprintf(p->netns, sizeof(p->netns), "%.*s", (int)(a - spec), spec);
	snprintf(p->label, sizeof(p->label), "%.*s", (int)(b - a - 1), a + 1);
	snprintf(p->pattern, sizeof(p->pattern), "%s", b + 1);
	return 0;
}

static int run_client(int argc, char **argv)
{
	struct opts o = {.server = {.sin_family = AF_INET, .sin_port = htons(53)},
			 .port = 443,
			 .names = 1,
			 .period_ms = 1500,
			 .timeout_ms = 1000,
			 .tries = 3,
			 .out = -1};
	struct pod *pods;
	int n = 0, i;

	inet_pton(AF_INET, "10.96.0.11", &o.server.sin_addr);
	for (i = 2; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--server") && inet_pton(AF_INET, v, &o.server.sin_addr) == 1)
			continue;
		if (!strcmp(k, "--out")) {
			o.out = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			continue;
		}
		int *f = !strcmp(k, "--port")         ? &o.port
			 : !strcmp(k, "--names")      ? &o.names
			 : !strcmp(k, "--first")      ? &o.first
			 : !strcmp(k, "--period-ms")  ? &o.period_ms
			 : !strcmp(k, "--count")      ? &o.count
			 : !strcmp(k, "--timeout-ms") ? &o.timeout_ms
			 : !strcmp(k, "--tries")      ? &o.tries
						      : NULL;
		if (!f)
			return fprintf(stderr, "dnsload client: bad option %s %s\n", k, v), 2;
		*f = atoi(v);
	}
	if (o.out < 0 || i >= argc || o.names < 1 || o.period_ms < 1 || o.tries < 1)
		return fprintf(stderr, "dnsload client: --out FILE and NETNS@LABEL@PATTERN... wanted\n"), 2;
	pods = calloc((size_t)(argc - i), sizeof(*pods));
	if (!pods)
		return 1;
	for (; i < argc; i++, n++) {
		pods[n].o = &o;
		if (parse_pod(&pods[n], argv[i]) < 0)
			return fprintf(stderr, "dnsload client: bad pod %s\n", argv[i]), 2;
	}
	srandom((unsigned)(getpid() ^ mono_us()));
	for (i = 0; i < n; i++)
		if (pthread_create(&pods[i].th, NULL, client, &pods[i]) != 0)
			return fprintf(stderr, "dnsload client: thread %d: %s\n", i, strerror(errno)), 1;
	for (i = 0; i < n; i++)
		pthread_join(pods[i].th, NULL);
	free(pods);
	return 0;
}

/* ---- flood and sink ------------------------------------------------------ */

static int run_flood(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	const char *suffix = "flood.world.test";
	long rate = 1000, sent = 0, answered = 0;
	int i, fd;
	int64_t t0;

	for (i = 2; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--server"))
			inet_pton(AF_INET, argv[i + 1], &sa.sin_addr);
		else if (!strcmp(argv[i], "--rate"))
			rate = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--suffix"))
			suffix = argv[i + 1];
	}
	if (i >= argc || !sa.sin_addr.s_addr || rate < 1 || enter(argv[i]) < 0)
		return fprintf(stderr, "dnsload flood: --server A --rate R NETNS\n"), 2;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	t0 = mono_us();
	while (!stop) {
		/* Catch up to where the rate says we should be, 1 ms at a time. */
		long due = (long)((mono_us() - t0) * rate / 1000000);
		uint8_t q[300], m[4096];

		for (; sent < due && !stop; sent++) {
			char name[256];
			unsigned k = (unsigned)(sent % 65534) + 1;
			size_t len;

			snprintf(name, sizeof(name), "10-22-%u-%u.%s", k >> 8, k & 255, suffix);
			len = query(q, sizeof(q), name, (uint16_t)sent);
			if (sendto(fd, q, len, 0, (const struct sockaddr *)&sa, sizeof(sa)) < 0 &&
			    errno != EAGAIN && errno != ENOBUFS && errno != EPERM)
				break;
		}
		while (recv(fd, m, sizeof(m), 0) > 0)
			answered++;
		usleep(1000);
	}
	printf("sent %ld answered %ld in %.1f s\n", sent, answered, (double)(mono_us() - t0) / 1e6);
	return 0;
}

static int run_sink(int argc, char **argv)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT};
	int fd, zero = 0, one = 1;

	if (argc < 3)
		return fprintf(stderr, "dnsload sink PORT\n"), 2;
	sa.sin6_port = htons((uint16_t)atoi(argv[2]));
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0)
		return fprintf(stderr, "dnsload sink: %s\n", strerror(errno)), 1;
	while (!stop) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			close(c);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_term};

	/* No SA_RESTART: a blocked poll, usleep or accept returns on TERM. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2 && !strcmp(argv[1], "client"))
		return run_client(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "flood"))
		return run_flood(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "sink"))
		return run_sink(argc, argv);
	fprintf(stderr, "usage: dnsload client|flood|sink ... (see its header)\n");
	return 2;
}
