/* The local socket's clients. See flowserve.h. */
#include "agent/flowserve.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "kernel/unixsock.h"

void ng_flowserve_init(struct ng_flowserve *s, int client_tag)
{
	s->client_tag = client_tag;
	pthread_mutex_init(&s->names_mu, NULL);
}

void ng_flowserve_set_names(struct ng_flowserve *s, ng_flow_names_fn fn, void *data)
{
	pthread_mutex_lock(&s->names_mu);
	s->names = fn;
	s->names_data = data;
	pthread_mutex_unlock(&s->names_mu);
}

static void client_drop(struct ng_flowserve *f, size_t i)
{
	ng_flowclient_free(f->clients[i]);
	f->clients[i] = f->clients[--f->n_clients];
}

void ng_flowserve_accept(struct ng_flowserve *f)
{
	uid_t uid;
	int fd;

	while ((fd = ng_unix_accept(f->listen_fd, &uid)) >= 0) {
		struct ng_flowclient *c;
		struct epoll_event ev = {.events = EPOLLIN};
		/* The socket file is root's (0600); a peer of another uid came
		 * in some other way: nothing for it. */
		if (uid != 0 && uid != geteuid()) {
			close(fd);
			continue;
		}
		if (f->n_clients == NG_FLOW_CLIENTS) {
			static const char busy[] =
				"{\"event\":\"error\",\"error\":\"the agent serves 16 clients "
				"already\"}\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			}
			close(fd);
			continue;
		}
		c = ng_flowclient_new(fd, f->client_tag, ng_mono_ms());
		if (!c)
			continue;
		ev.data.ptr = &c->tag;
		if (epoll_ctl(f->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			ng_flowclient_free(c);
			continue;
		}
		f->clients[f->n_clients++] = c;
	}
}

static void answer_names(struct ng_flowserve *f, struct ng_flowclient *c)
{
	json_t *doc = NULL;
	char *s;

	pthread_mutex_lock(&f->names_mu);
	if (f->names)
		doc = f->names(f->names_data, &c->r.filter);
	pthread_mutex_unlock(&f->names_mu);
	if (!doc)
		doc = json_pack("{s:s,s:s}", "event", "error", "error", "the agent has no view yet");
	s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (s) {
		ng_flowclient_queue(c, s, strlen(s));
		ng_flowclient_queue(c, "\n", 1);
	}
	free(s);
	json_decref(doc);
	c->closing = true;
}

bool ng_flowserve_event(struct ng_flowserve *f, struct ng_flowclient *c, uint32_t events,
			struct ng_flowring *ring, char *(*start)(void *), void *start_data)
{
	if (events & (EPOLLHUP | EPOLLERR))
		return false;
	if ((events & EPOLLIN) && !c->have_req) {
		int rc = ng_flowclient_read_request(c);

		if (rc < 0 && !c->closing)
			return false;
		if (rc > 0 && c->r.op == NG_FLOW_OP_NAMES) {
			answer_names(f, c);
		} else if (rc > 0) {
			char *s = start(start_data);

			ng_flowclient_start(c, ring, s ? s : "{\"event\":\"start\"}");
			free(s);
		}
	} else if (events & EPOLLIN) {
		char b[256];
		ssize_t n = recv(c->fd, b, sizeof(b), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return false; /* the reader went away */
	}
	return true;
}

void ng_flowserve_run(struct ng_flowserve *f, struct ng_flowring *ring, int64_t now)
{
	for (size_t i = f->n_clients; i-- > 0;) {
		struct ng_flowclient *c = f->clients[i];
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &c->tag};
		int rc;

		if (!c->have_req && !c->closing) {
			if (now - c->since_ms > NG_FLOWCLIENT_REQ_MS)
				client_drop(f, i);
			continue;
		}
		ng_flowclient_fill(c, ring, ng_wall_ms());
		rc = ng_flowclient_flush(c);
		if (rc < 0 || (rc > 0 && c->closing)) {
			client_drop(f, i);
			continue;
		}
		/* Output waiting: the socket is full, say when it drains. */
		if ((rc == 0) != c->want_out) {
			c->want_out = rc == 0;
			ev.events |= c->want_out ? EPOLLOUT : 0;
			epoll_ctl(f->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		}
	}
}

void ng_flowserve_drop(struct ng_flowserve *f, struct ng_flowclient *c)
{
	for (size_t i = 0; i < f->n_clients; i++)
		if (f->clients[i] == c) {
			client_drop(f, i);
			return;
		}
}

void ng_flowserve_close(struct ng_flowserve *s)
{
	while (s->n_clients)
		client_drop(s, s->n_clients - 1);
	pthread_mutex_destroy(&s->names_mu);
}
