/* connrate: TCP connection rate, one connection at a time.
 *
 *   connrate listen ADDR PORT MAX_SECONDS
 *       accepts and closes at once (the server closes first, so the client
 *       never holds TIME_WAIT and its ports are reusable); exits after
 *       MAX_SECONDS, whatever happens (a bound, not a duration to wait out)
 *   connrate connect ADDR PORT SECONDS
 *       for SECONDS: socket, connect, read until the server's FIN, close;
 *       prints "conns N failures F seconds S rate R p50_us P p99_us Q"
 *       (latency of one whole connection: SYN to the client's close)
 *
 * IPv4 only; every address is one the benchmark created in its own network
 * namespaces. Part of `make bench` (test/bench/).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SAMPLES (4 * 1024 * 1024)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_u32(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int do_listen(struct sockaddr_in *sa, double max_seconds)
{
	int one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 1};
	double end = now() + max_seconds;

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s, (struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(s, 4096) < 0) {
		perror("connrate: listen");
		return 1;
	}
	/* accept() wakes at least once a second to check the deadline. */
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (now() < end) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0)
			close(c);
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
			perror("connrate: accept");
	}
	close(s);
	return 0;
}

static int do_connect(struct sockaddr_in *sa, double seconds)
{
	unsigned *lat = malloc(MAX_SAMPLES * sizeof(*lat));
	unsigned long conns = 0, failures = 0;
	struct timeval tv = {.tv_sec = 1};
	double start = now(), end = start + seconds, t, elapsed;
	char buf[64];

	if (!lat)
		return 1;
	while ((t = now()) < end) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ssize_t n;

		if (s < 0) {
			perror("connrate: socket");
			return 1;
		}
		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* bounds connect() */
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(s, (struct sockaddr *)sa, sizeof(*sa)) < 0) {
			failures++;
			close(s);
			continue;
		}
		do
			n = read(s, buf, sizeof(buf));
		while (n > 0);
		close(s);
		if (n < 0) {
			failures++;
			continue;
		}
		if (conns < MAX_SAMPLES)
			lat[conns] = (unsigned)((now() - t) * 1e6);
		conns++;
	}
	elapsed = now() - start;
	unsigned long k = conns < MAX_SAMPLES ? conns : MAX_SAMPLES;
	qsort(lat, k, sizeof(*lat), cmp_u32);
	printf("conns %lu failures %lu seconds %.3f rate %.1f p50_us %u p99_us %u\n", conns, failures,
	       elapsed, (double)conns / elapsed, k ? lat[k / 2] : 0, k ? lat[k * 99 / 100] : 0);
	free(lat);
	return failures && !conns;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	double seconds;

	if (argc != 5 || inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1 || (seconds = atof(argv[4])) <= 0) {
		fprintf(stderr, "usage: connrate listen|connect ADDR PORT SECONDS\n");
		return 2;
	}
	sa.sin_port = htons((unsigned short)atoi(argv[3]));
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[1], "listen") == 0)
		return do_listen(&sa, seconds);
	if (strcmp(argv[1], "connect") == 0)
		return do_connect(&sa, seconds);
	fprintf(stderr, "connrate: unknown mode %s\n", argv[1]);
	return 2;
}
