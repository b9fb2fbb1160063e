/* /readyz and /metrics for the kubelet's probes and the node's scraper: a
 * request is read (briefly: the loop must get back to the queues), answered
 * and the connection closed. Health here; the operating issue fills in the
 * metrics. */
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

#include "agent/agent.h"

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
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		host[strlen(host) - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
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

static void metrics(const struct ng_agent *a, FILE *f)
{
	struct ng_counters t = a->c;
	size_t learned = 0;

	for (size_t i = 0; i < a->pods.n; i++) {
		const struct ng_counters *c = &a->pods.v[i]->c;

		t.answers += c->answers;
		t.learned += c->learned;
		t.kept_alive += c->kept_alive;
		t.metadata += c->metadata;
		t.unparsed += c->unparsed;
		t.full += c->full;
		t.commits += c->commits;
		t.commit_errors += c->commit_errors;
		t.dropped += c->dropped;
		t.expired += c->expired;
		learned += a->pods.v[i]->tr.n;
	}
#define M(name, help, type, v)                                                                           \
	fprintf(f,                                                                                       \
		"# HELP boxxkite_netguard_agent_" name " " help "\n# TYPE boxxkite_netguard_agent_" name \
		" " type "\n"                                                                            \
		"boxxkite_netguard_agent_" name " %llu\n",                                               \
		(unsigned long long)(v))
	M("pods", "Pods whose DNS answers the agent serves.", "gauge", a->pods.n);
	M("learned_elements", "Learned set elements alive, all pods.", "gauge", learned);
	M("answers_total", "DNS messages read from pods' queues.", "counter", t.answers);
	M("learned_total", "Set elements added or refreshed.", "counter", t.learned);
	M("kept_alive_total", "Refreshes for live connections.", "counter", t.kept_alive);
	M("metadata_refused_total", "Metadata addresses in answers, never learned.", "counter", t.metadata);
	M("unparsed_total", "Answers that did not parse (passed, nothing learned).", "counter", t.unparsed);
	M("tracker_full_total", "Elements not learned: a pod's bound was reached.", "counter", t.full);
	M("commits_total", "Transactions acknowledged.", "counter", t.commits);
	M("commit_errors_total", "Transactions refused or lost (the answer was dropped).", "counter",
	  t.commit_errors);
	M("dropped_total", "Queued packets dropped.", "counter", t.dropped);
	M("expired_total", "Learned elements whose lifetime ran out.", "counter", t.expired);
#undef M
}

void ng_http_serve(struct ng_agent *a)
{
	int fd = accept4(a->http_fd, NULL, NULL, SOCK_CLOEXEC);
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
		if (!strncmp(req, "GET /readyz ", 12) || !strncmp(req, "GET /healthz ", 13)) {
			status = a->serving ? "200 OK" : "503 Service Unavailable";
			fprintf(f, "%s\n", a->serving ? "ok" : "starting");
		} else if (!strncmp(req, "GET /metrics ", 13)) {
			status = "200 OK";
			metrics(a, f);
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
