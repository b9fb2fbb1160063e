/* gailoop: whole lookups as an application makes them.
 *
 *   gailoop COUNT NAME
 *
 * Calls getaddrinfo(NAME) COUNT times through the C library it is linked
 * with (glibc here: its search list, ndots and parallel A/AAAA, read from
 * /etc/resolv.conf), one at a time, and prints
 * "n N p50_us P p99_us Q failed F". */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0, failed = 0, ok = 0;
	double *t;

	if (n <= 0) {
		fprintf(stderr, "usage: gailoop COUNT NAME\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		struct addrinfo hints, *res = NULL;
		double t0 = now_us();

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(argv[2], NULL, &hints, &res) != 0) {
			failed++;
			continue;
		}
		t[ok++] = now_us() - t0;
		freeaddrinfo(res);
	}
	qsort(t, (size_t)ok, sizeof(*t), cmp);
	printf("n %d p50_us %.0f p99_us %.0f failed %d\n", ok, ok ? t[(ok - 1) / 2] : 0,
	       ok ? t[(int)((ok - 1) * 0.99)] : 0, failed);
	free(t);
	return 0;
}
