/* /healthz, /readyz and /metrics on the --listen socket. See http.h. */
#include "agent/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int ng_http_listen(const char *addr, struct ng_err *err)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	long port;
	int fd, one = 1;
	char *end;

	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host))
		return ng_fail(err, NG_E_ENV, "--listen %s: want ADDR:PORT", addr);
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return ng_fail(err, NG_E_ENV, "--listen %s: bad port", addr);
	/* [v6]:PORT, or v6:PORT unbracketed as the downward API's
	 * status.hostIP gives it ($(HOST_IP):9617): the last colon is the
	 * port's. */
	if ((host[0] == '[' && host[strlen(host) - 1] == ']') || strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		bool br = host[0] == '[';

		if (br)
			host[strlen(host) - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + br, &s6->sin6_addr) != 1)
			return ng_fail(err, NG_E_ENV, "--listen %s: bad address", addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return ng_fail(err, NG_E_ENV, "--listen %s: bad address", addr);
		sl = sizeof(*s4);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ng_fail(err, NG_E_INTERNAL, "--listen: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 16) < 0) {
		int e = errno;

		close(fd);
		return ng_fail(err, NG_E_INTERNAL, "--listen %s: %s", addr, strerror(e));
	}
	return fd;
}

void ng_http_serve(int listen_fd, bool serving, struct ng_ops *ops)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	char req[1024], *body = NULL;
	size_t blen = 0, n = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	const char *status = "404 Not Found";
	FILE *f;

	if (fd < 0)
		return;
	while (n < sizeof(req) - 1 && poll(&p, 1, 100) > 0) {
		ssize_t r = recv(fd, req + n, sizeof(req) - 1 - n, MSG_DONTWAIT);

		if (r <= 0)
			break;
		n += (size_t)r;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[n] = '\0';
	f = open_memstream(&body, &blen);
	if (f) {
		if (!strncmp(req, "GET /healthz ", 13)) {
			/* Liveness: the loop answers. */
			status = serving ? "200 OK" : "503 Service Unavailable";
			fprintf(f, "%s\n", serving ? "ok" : "starting");
		} else if (!strncmp(req, "GET /readyz ", 12)) {
			/* Readiness: installed, configured and serving (agent/readyz.h). */
			status = ng_ops_readyz(ops, f) ? "200 OK" : "503 Service Unavailable";
		} else if (!strncmp(req, "GET /metrics ", 13)) {
			status = "200 OK";
			ng_ops_metrics(ops, f);
		} else {
			fprintf(f, "not found\n");
		}
		fclose(f);
		dprintf(fd,
			"HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
			"Connection: close\r\n\r\n",
			status, blen);
		if (body && write(fd, body, blen) < 0) {
			/* the client went away: nothing to do */
		}
	}
	free(body);
	close(fd);
}
