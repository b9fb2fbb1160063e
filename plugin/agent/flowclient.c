/* One client of the agent's local socket. See flowclient.h. */
#include "agent/flowclient.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct ng_flowclient *ng_flowclient_new(int fd, int tag, int64_t now_ms)
{
	struct ng_flowclient *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return NULL;
	}
	c->tag = tag;
	c->fd = fd;
	c->since_ms = now_ms;
	return c;
}

void ng_flowclient_free(struct ng_flowclient *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	free(c);
}

int ng_flowclient_queue(struct ng_flowclient *c, const char *s, size_t n)
{
	if (c->off == c->len)
		c->off = c->len = 0;
	/* The written head goes first: the buffer holds only what is left. */
	if (c->len + n > c->cap && c->off) {
		memmove(c->out, c->out + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	if (c->len + n > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		char *o;

		while (cap < c->len + n)
			cap *= 2;
		o = realloc(c->out, cap);
		if (!o)
			return -1;
		c->out = o;
		c->cap = cap;
	}
	memcpy(c->out + c->len, s, n);
	c->len += n;
	return 0;
}

static void queue_line(struct ng_flowclient *c, const char *msg)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "{\"event\":\"error\",\"error\":\"%s\"}\n", msg);

	if (n > 0 && (size_t)n < sizeof(line))
		ng_flowclient_queue(c, line, (size_t)n);
	c->closing = true;
}

int ng_flowclient_read_request(struct ng_flowclient *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->req + c->req_len, sizeof(c->req) - c->req_len);
		char *nl;

		if (n == 0)
			return -1;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->req_len += (size_t)n;
		nl = memchr(c->req, '\n', c->req_len);
		if (nl) {
			struct ng_err err = {0};

			if (ng_flow_req_parse(c->req, (size_t)(nl - c->req), &c->r, &err) < 0) {
				json_t *o = json_pack("{s:s,s:s}", "event", "error", "error", err.msg);
				char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

				if (s) {
					ng_flowclient_queue(c, s, strlen(s));
					ng_flowclient_queue(c, "\n", 1);
				}
				free(s);
				json_decref(o);
				c->closing = true;
				return -1;
			}
			c->have_req = true;
			return 1;
		}
		if (c->req_len == sizeof(c->req)) {
			queue_line(c, "request longer than the agent reads");
			return -1;
		}
	}
}

void ng_flowclient_start(struct ng_flowclient *c, const struct ng_flowring *ring, const char *start)
{
	c->cur.next = c->r.history ? ng_flowring_since(ring, c->r.filter.since_ms) : ring->next;
	c->end = c->r.follow ? UINT64_MAX : ring->next;
	ng_flowclient_queue(c, start, strlen(start));
	ng_flowclient_queue(c, "\n", 1);
}

static void queue_event(struct ng_flowclient *c, const struct ng_flow_ev *ev)
{
	json_t *o = ng_flowev_to_json(ev);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	if (s && ng_flowclient_queue(c, s, strlen(s)) == 0)
		ng_flowclient_queue(c, "\n", 1);
	free(s);
	json_decref(o);
}

void ng_flowclient_fill(struct ng_flowclient *c, const struct ng_flowring *ring, int64_t now_wall_ms)
{
	const struct ng_flow_ev *ev;

	if (!c->have_req || c->r.op != NG_FLOW_OP_OBSERVE || c->closing)
		return;
	while (c->len - c->off < NG_FLOWCLIENT_OUT && c->cur.next < c->end) {
		ev = ng_flowcursor_next(ring, &c->cur);
		if (c->cur.missed) {
			struct ng_flow_ev d;

			ng_flowev_note(
				&d, NG_FLOW_DROPPED, NULL, NULL, NG_LOG_POD, c->cur.missed,
				"this reader fell behind the agent's ring: events overwritten before it "
				"read them",
				now_wall_ms);
			c->dropped += c->cur.missed;
			c->cur.missed = 0;
			queue_event(c, &d);
		}
		if (!ev)
			break;
		if (ev->seq < c->end && ng_flow_match(&c->r.filter, ev))
			queue_event(c, ev);
	}
	if (!c->r.follow && c->cur.next >= c->end)
		c->closing = true;
}

int ng_flowclient_flush(struct ng_flowclient *c)
{
	while (c->off < c->len) {
		ssize_t n = send(c->fd, c->out + c->off, c->len - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		c->off += (size_t)n;
	}
	c->off = c->len = 0;
	return 1;
}
