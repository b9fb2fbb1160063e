/* /healthz, /readyz and /metrics on the --listen socket, on a thread of
 * their own. See http.h. */
#include "agent/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/httpreq.h"
#include "agent/metrics.h"
#include "agent/promtext.h"
#include "base/clock.h"

/* Connections accepted per wakeup: a flood of connects gets the thread
 * back to the ones it holds. */
#define ACCEPT_BURST 32

static const char *const result_names[NG_HR_COUNT] = {
	"served", "not_found", "bad_method", "bad_request", "too_large", "refused", "timeout", "closed",
};

struct conn {
	int fd; /* -1: a free slot */
	int64_t deadline_ms;
	char in[NG_HTTP_REQ_MAX];
	size_t n;
	char *out; /* the whole answer, headers and body */
	size_t olen, ooff;
	enum ng_http_result result; /* counted when the connection ends */
};

struct ng_http {
	struct ng_ops *ops;
	int listen_fd, stop_fd, epfd;
	pthread_t thread;
	atomic_bool serving;
	struct conn c[NG_HTTP_CONNS];
	uint64_t count[NG_HR_COUNT]; /* this thread's only */
	/* The /metrics body of view `body_gen` (agent/ops.h). */
	char *body;
	size_t blen;
	uint64_t body_gen;
	bool have_body;
};

static int listen_on(const char *addr, struct ng_err *err)
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
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		close(fd);
		return ng_fail(err, NG_E_INTERNAL, "--listen %s: %s", addr, strerror(e));
	}
	return fd;
}

static void conn_end(struct ng_http *h, struct conn *c)
{
	h->count[c->result]++;
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
}

/* Our own counters, after the view's families (agent/metrics.c's style). */
static void own_metrics(const struct ng_http *h, FILE *f)
{
	struct ng_prom_labels l;

	ng_prom_family(f, NG_METRIC_PREFIX "agent_http_connections_total", "counter",
		       "Connections to --listen, by how they ended (served; not_found, bad_method, "
		       "bad_request, too_large; refused: over the bound of connections at once; timeout: "
		       "the per-connection deadline passed; closed: the client went first).");
	for (int r = 0; r < NG_HR_COUNT; r++) {
		l = (struct ng_prom_labels){{"result", result_names[r]}};
		ng_prom_u64(f, NG_METRIC_PREFIX "agent_http_connections_total", &l, h->count[r]);
	}
}

/* The body of /metrics: the view's part rendered again only when the view
 * changed. 0, or -1 out of memory. */
static int metrics_body(struct ng_http *h, FILE *f)
{
	if (!h->have_body || ng_ops_view_gen(h->ops) != h->body_gen) {
		char *b = NULL;
		size_t bl = 0;
		FILE *m = open_memstream(&b, &bl);

		if (!m)
			return -1;
		h->body_gen = ng_ops_metrics(h->ops, m);
		if (fclose(m) != 0) {
			free(b);
			return -1;
		}
		free(h->body);
		h->body = b;
		h->blen = bl;
		h->have_body = true;
	}
	fwrite(h->body, 1, h->blen, f);
	own_metrics(h, f);
	return 0;
}

/* The answer to the request in c->in, whole, into c->out. */
static void answer(struct ng_http *h, struct conn *c, enum ng_httpreq_status st, const struct ng_httpreq *req)
{
	const char *status = "200 OK", *type = "text/plain; charset=utf-8", *extra = "";
	char *body = NULL, *head = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);
	bool head_only = st == NG_HTTPREQ_OK && req->method == NG_HTTP_HEAD;
	int hl;

	if (!f) {
		c->result = NG_HR_CLOSED;
		return;
	}
	c->result = NG_HR_SERVED;
	if (st == NG_HTTPREQ_TOO_LARGE) {
		status = "431 Request Header Fields Too Large", c->result = NG_HR_TOO_LARGE;
		fprintf(f, "request too large\n");
	} else if (st == NG_HTTPREQ_BAD) {
		status = "400 Bad Request", c->result = NG_HR_BAD_REQUEST;
		fprintf(f, "bad request\n");
	} else if (req->method == NG_HTTP_OTHER) {
		status = "405 Method Not Allowed", c->result = NG_HR_BAD_METHOD;
		extra = "Allow: GET, HEAD\r\n";
		fprintf(f, "only GET and HEAD\n");
	} else {
		switch (ng_httpreq_endpoint(req)) {
		case NG_EP_HEALTHZ: {
			/* Liveness: the loop serves. */
			bool serving = atomic_load(&h->serving);

			status = serving ? "200 OK" : "503 Service Unavailable";
			fprintf(f, "%s\n", serving ? "ok" : "starting");
			break;
		}
		case NG_EP_READYZ:
			/* Readiness: installed, configured and serving (agent/readyz.h). */
			status = ng_ops_readyz(h->ops, f) ? "200 OK" : "503 Service Unavailable";
			break;
		case NG_EP_METRICS:
			/* The Prometheus text format, version 0.0.4. */
			type = "text/plain; version=0.0.4; charset=utf-8";
			if (metrics_body(h, f) < 0)
				status = "500 Internal Server Error";
			break;
		case NG_EP_NONE:
			status = "404 Not Found", c->result = NG_HR_NOT_FOUND;
			fprintf(f, "not found\n");
			break;
		}
	}
	if (fclose(f) != 0) {
		free(body);
		c->result = NG_HR_CLOSED;
		return;
	}
	hl = asprintf(&head,
		      "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
		      status, type, blen, extra);
	if (hl < 0 || !(c->out = malloc((size_t)hl + (head_only ? 0 : blen)))) {
		free(head);
		free(body);
		c->result = NG_HR_CLOSED;
		return;
	}
	memcpy(c->out, head, (size_t)hl);
	if (!head_only)
		memcpy(c->out + hl, body, blen);
	c->olen = (size_t)hl + (head_only ? 0 : blen);
	c->ooff = 0;
	free(head);
	free(body);
}

/* Writes what the socket takes now; the connection ends when it is all
 * out (or the client is gone). */
static void conn_write(struct ng_http *h, struct conn *c)
{
	while (c->ooff < c->olen) {
		ssize_t w = send(c->fd, c->out + c->ooff, c->olen - c->ooff, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* EPOLLOUT says when to go on */
		if (w <= 0) {
			c->result = NG_HR_CLOSED;
			conn_end(h, c);
			return;
		}
		c->ooff += (size_t)w;
	}
	/* All out: our side of the connection ends here (a client that keeps
	 * its side open has its answer whole). */
	shutdown(c->fd, SHUT_WR);
	conn_end(h, c);
}

static void conn_read(struct ng_http *h, struct conn *c)
{
	struct ng_httpreq req;
	enum ng_httpreq_status st = NG_HTTPREQ_MORE;

	if (c->out) { /* answering already: what it sends now is dropped, boundedly */
		char sink[512];

		for (int k = 0; k < 16 && recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; k++) {
		}
		return;
	}
	while (st == NG_HTTPREQ_MORE && c->n < sizeof(c->in)) {
		ssize_t r = recv(c->fd, c->in + c->n, sizeof(c->in) - c->n, MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the rest later, within the deadline */
		if (r <= 0) {
			c->result = NG_HR_CLOSED;
			conn_end(h, c);
			return;
		}
		c->n += (size_t)r;
		st = ng_httpreq_parse(c->in, c->n, &req);
	}
	if (st == NG_HTTPREQ_MORE)
		st = ng_httpreq_parse(c->in, c->n, &req);
	answer(h, c, st, &req);
	if (!c->out) {
		conn_end(h, c);
		return;
	}
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	conn_write(h, c);
}

static void accept_some(struct ng_http *h)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
				   "Connection: close\r\n\r\n";

	for (int k = 0; k < ACCEPT_BURST; k++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c = NULL;

		if (fd < 0)
			return;
		for (int i = 0; i < NG_HTTP_CONNS && !c; i++)
			if (h->c[i].fd < 0)
				c = &h->c[i];
		if (!c) {
			/* Over the bound: told at once (a fresh socket's buffer
			 * takes these bytes), closed, counted. */
			if (send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
				/* gone already */
			}
			close(fd);
			h->count[NG_HR_REFUSED]++;
			continue;
		}
		*c = (struct conn){.fd = fd, .deadline_ms = ng_mono_ms() + NG_HTTP_DEADLINE_MS};
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			c->fd = -1;
			h->count[NG_HR_CLOSED]++;
		}
	}
}

/* Connections past their deadline end; returns the ms to the next one
 * (-1: none). */
static int expire(struct ng_http *h)
{
	int64_t now = ng_mono_ms(), next = -1;

	for (int i = 0; i < NG_HTTP_CONNS; i++) {
		struct conn *c = &h->c[i];

		if (c->fd < 0)
			continue;
		if (c->deadline_ms <= now) {
			c->result = NG_HR_TIMEOUT;
			conn_end(h, c);
		} else if (next < 0 || c->deadline_ms - now < next) {
			next = c->deadline_ms - now;
		}
	}
	return (int)next;
}

static void *thread_main(void *data)
{
	struct ng_http *h = data;
	struct epoll_event evs[NG_HTTP_CONNS + 2];

	for (;;) {
		int n = epoll_wait(h->epfd, evs, NG_HTTP_CONNS + 2, expire(h));

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &h->stop_fd)
				return NULL;
			if (tag == &h->listen_fd) {
				accept_some(h);
				continue;
			}
			struct conn *c = tag;
			if (c->fd < 0)
				continue; /* ended earlier in this batch */
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				conn_read(h, c);
			if (c->fd >= 0 && c->out && (evs[i].events & EPOLLOUT))
				conn_write(h, c);
		}
	}
	return NULL;
}

int ng_http_start(const char *addr, struct ng_ops *ops, struct ng_http **out, struct ng_err *err)
{
	struct ng_http *h = calloc(1, sizeof(*h));
	struct epoll_event ev = {.events = EPOLLIN};

	if (!h)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	h->ops = ops;
	for (int i = 0; i < NG_HTTP_CONNS; i++)
		h->c[i].fd = -1;
	h->stop_fd = h->epfd = -1;
	h->listen_fd = listen_on(addr, err);
	if (h->listen_fd < 0) {
		free(h);
		return -1;
	}
	h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->stop_fd < 0 || h->epfd < 0)
		goto fail;
	ev.data.ptr = &h->listen_fd;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->listen_fd, &ev) < 0)
		goto fail;
	ev.data.ptr = &h->stop_fd;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->stop_fd, &ev) < 0)
		goto fail;
	if (pthread_create(&h->thread, NULL, thread_main, h) != 0)
		goto fail;
	*out = h;
	return 0;
fail:
	ng_fail(err, NG_E_INTERNAL, "starting the HTTP thread: %s", strerror(errno));
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->stop_fd >= 0)
		close(h->stop_fd);
	close(h->listen_fd);
	free(h);
	return -1;
}

void ng_http_set_serving(struct ng_http *h, bool serving)
{
	if (h)
		atomic_store(&h->serving, serving);
}

void ng_http_stop(struct ng_http *h)
{
	uint64_t one = 1;

	if (!h)
		return;
	if (write(h->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(h->thread, NULL);
	for (int i = 0; i < NG_HTTP_CONNS; i++)
		if (h->c[i].fd >= 0) {
			close(h->c[i].fd);
			free(h->c[i].out);
		}
	close(h->epfd);
	close(h->stop_fd);
	close(h->listen_fd);
	free(h->body);
	free(h);
}
