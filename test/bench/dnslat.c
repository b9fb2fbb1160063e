/* dnslat: the latency of DNS answers as a pod sees them.
 *
 *   dnslat SERVER udp|tcp COUNT PATTERN [FIRST]
 *
 * Asks SERVER for the A record of PATTERN with %d replaced by FIRST..
 * FIRST+COUNT-1, one query at a time (a fresh TCP connection per query for
 * tcp; the connect is not timed, the query and its whole answer are), and
 * prints "n N p50_us P p99_us Q lost L". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static size_t query(uint8_t *q, const char *name, uint16_t id)
{
	size_t n = 12;
	const char *s = name;

	memset(q, 0, 12);
	q[0] = (uint8_t)(id >> 8), q[1] = (uint8_t)id, q[2] = 1, q[5] = 1;
	while (*s) {
		const char *dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);

		q[n++] = (uint8_t)l;
		memcpy(q + n, s, l);
		n += l;
		s += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = 0, q[n++] = 1, q[n++] = 0, q[n++] = 1;
	return n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	int count, first = 0, tcp, lost = 0, n = 0;
	double *lat;

	if (argc < 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1)
		return fprintf(stderr, "usage: dnslat SERVER udp|tcp COUNT PATTERN [FIRST]\n"), 2;
	tcp = !strcmp(argv[2], "tcp");
	count = atoi(argv[3]);
	if (argc > 5)
		first = atoi(argv[5]);
	lat = calloc((size_t)count, sizeof(*lat));
	if (!lat)
		return 1;
	for (int i = 0; i < count; i++) {
		char name[256];
		uint8_t q[300], a[4096];
		int fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		size_t len, got = 0;
		double t0;

		snprintf(name, sizeof(name), argv[4], first + i);
		len = query(q + 2, name, (uint16_t)i);
		q[0] = (uint8_t)(len >> 8), q[1] = (uint8_t)len;
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			lost++;
			if (fd >= 0)
				close(fd);
			continue;
		}
		t0 = now_us();
		if (send(fd, tcp ? q : q + 2, tcp ? len + 2 : len, 0) < 0) {
			lost++;
			close(fd);
			continue;
		}
		for (;;) {
			ssize_t r;

			if (poll(&p, 1, 1000) <= 0)
				break;
			r = recv(fd, a + got, sizeof(a) - got, 0);
			if (r <= 0)
				break;
			got += (size_t)r;
			if (!tcp || (got >= 2 && got >= 2u + ((size_t)a[0] << 8 | a[1])))
				break;
		}
		if ((!tcp && got >= 12) || (tcp && got >= 14)) {
			lat[n++] = now_us() - t0;
		} else {
			lost++;
		}
		close(fd);
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp);
	printf("n %d p50_us %.1f p99_us %.1f lost %d\n", n, n ? lat[n / 2] : 0.0,
	       n ? lat[(n * 99) / 100] : 0.0, lost);
	free(lat);
	return 0;
}
