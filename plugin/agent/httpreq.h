/* One HTTP request as the agent's HTTP thread (agent/http.h) reads it:
 * the request line and the end of the headers, nothing else (no body is
 * ever read, no header is used). Pure: unit-tested without a socket. */
#ifndef NG_AGENT_HTTPREQ_H
#define NG_AGENT_HTTPREQ_H

#include <stddef.h>

/* The largest request (request line and headers) read; a longer one is
 * answered 431 and closed. */
#define NG_HTTP_REQ_MAX 4096

enum ng_httpreq_status {
	NG_HTTPREQ_MORE,      /* the headers have not ended yet */
	NG_HTTPREQ_OK,        /* a request line, headers ended */
	NG_HTTPREQ_BAD,       /* not an HTTP/1.x request line: 400 */
	NG_HTTPREQ_TOO_LARGE, /* NG_HTTP_REQ_MAX bytes and the headers go on: 431 */
};

enum ng_http_method { NG_HTTP_GET, NG_HTTP_HEAD, NG_HTTP_OTHER };

struct ng_httpreq {
	enum ng_http_method method;
	char path[64]; /* the target up to '?' or '#' ("" when longer: no such endpoint) */
};

/* Looks at the `n` bytes read so far. */
enum ng_httpreq_status ng_httpreq_parse(const char *buf, size_t n, struct ng_httpreq *out);

/* The endpoint `req` names (NG_EP_NONE: 404). */
enum ng_http_endpoint { NG_EP_HEALTHZ, NG_EP_READYZ, NG_EP_METRICS, NG_EP_NONE };
enum ng_http_endpoint ng_httpreq_endpoint(const struct ng_httpreq *req);

#endif
