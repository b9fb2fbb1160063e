/* The agent's HTTP side, for the kubelet's probes and the node's scraper:
 * /healthz (the loop serves), /readyz and /metrics (the ops thread's last
 * view: agent/ops.h), on a thread of its own. Nothing a client does
 * reaches the main loop that holds DNS answers: the main loop only sets
 * whether it serves (an atomic), and a render takes the view's own lock
 * (agent/ops.h), never the one the main loop publishes under.
 *
 * Bounds (README "Operating a node"), each counted in
 * agent_http_connections_total{result} when hit:
 *   - NG_HTTP_CONNS connections at once; one more is answered 503 at once
 *     and closed ("refused");
 *   - NG_HTTP_DEADLINE_MS for the whole connection, from accept to the
 *     last byte of the answer: a client that sends slowly, sends nothing,
 *     or never reads its answer is closed then ("timeout");
 *   - NG_HTTP_REQ_MAX bytes of request line and headers (431, "too_large");
 *   - GET and HEAD only (405 with Allow: GET, HEAD, "bad_method"); a
 *     request that is not HTTP/1.x is 400 ("bad_request"), an unknown
 *     path 404 ("not_found"); a query string is ignored.
 * Every socket is non-blocking; one epoll waits on all of them. The
 * /metrics body is rendered once per view (at most two a second), however
 * many scrapes come. */
#ifndef NG_AGENT_HTTP_H
#define NG_AGENT_HTTP_H

#include <stdbool.h>

#include "agent/ops.h"
#include "base/err.h"

#define NG_HTTP_CONNS       16
#define NG_HTTP_DEADLINE_MS 3000

/* The results counted per connection (agent_http_connections_total). */
enum ng_http_result {
	NG_HR_SERVED, /* answered 200 or 503 (readyz) */
	NG_HR_NOT_FOUND,
	NG_HR_BAD_METHOD,
	NG_HR_BAD_REQUEST,
	NG_HR_TOO_LARGE,
	NG_HR_REFUSED, /* over NG_HTTP_CONNS */
	NG_HR_TIMEOUT, /* NG_HTTP_DEADLINE_MS passed */
	NG_HR_CLOSED,  /* the client went before its answer was whole */
	NG_HR_COUNT
};

struct ng_http;

/* Listens on ADDR:PORT ([v6]:PORT) and starts the thread. 0 with *out, or
 * -1 with err. */
int ng_http_start(const char *addr, struct ng_ops *ops, struct ng_http **out, struct ng_err *err);
/* /healthz's answer: whether the main loop serves. */
void ng_http_set_serving(struct ng_http *h, bool serving);
/* Stops the thread, closes every socket. NULL: nothing. */
void ng_http_stop(struct ng_http *h);

#endif
