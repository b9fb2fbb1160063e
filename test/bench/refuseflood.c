/* refuseflood: a pod sending to a destination its table refuses, as fast
 * as it can, for SECONDS (each send fails at once: rejected in the output
 * hook). What a refusal costs, with and without the log chain.
 *
 *   refuseflood DST PORT SECONDS      prints "sent N per_s R"
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_in to = {.sin_family = AF_INET};
	double t0, end, secs;
	long n = 0;
	int fd;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: refuseflood DST PORT SECONDS\n");
		return 2;
	}
	to.sin_port = htons((unsigned short)atoi(argv[2]));
	secs = atof(argv[3]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return 1;
	t0 = now_s();
	end = t0 + secs;
	while (now_s() < end)
		for (int i = 0; i < 64; i++, n++)
			sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to));
	printf("sent %ld per_s %.0f\n", n, (double)n / (now_s() - t0));
	return 0;
}
