/* gaimusl NAME: getaddrinfo(NAME) through the C library it is linked with
 * (built static against musl for e2e/dnsquery.sh: musl's resolver, its
 * search-list and ndots handling, read from /etc/resolv.conf). Prints
 * "ok MS ADDR..." or "fail MS ms REASON"; exit 0 / 1. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct addrinfo hints, *res = NULL;
	double t0;
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: gaimusl NAME\n");
		return 2;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	t0 = now_ms();
	rc = getaddrinfo(argv[1], NULL, &hints, &res);
	if (rc != 0) {
		printf("fail %.1f ms %s\n", now_ms() - t0, gai_strerror(rc));
		return 1;
	}
	printf("ok %.1f ms", now_ms() - t0);
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		char buf[INET6_ADDRSTRLEN];
		const void *p = a->ai_family == AF_INET
					? (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr
					: (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr;

		printf(" %s", inet_ntop(a->ai_family, p, buf, sizeof(buf)));
	}
	printf("\n");
	freeaddrinfo(res);
	return 0;
}
