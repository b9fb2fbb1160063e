/* The request line of one HTTP request. See httpreq.h. */
#include "agent/httpreq.h"

#include <stdbool.h>
#include <string.h>

/* The end of the headers: an empty line (CRLF CRLF, or bare LF LF as
 * curl never sends but a hand-typed request may). */
static bool headers_end(const char *buf, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n' || (buf[i + 1] == '\r' && i + 2 < n && buf[i + 2] == '\n'))
			return true;
	}
	return false;
}

static bool tchar(char c)
{
	return c >= 'A' && c <= 'Z';
}

enum ng_httpreq_status ng_httpreq_parse(const char *buf, size_t n, struct ng_httpreq *out)
{
	const char *eol, *sp1, *sp2, *target;
	size_t mlen, tlen, plen;

	memset(out, 0, sizeof(*out));
	if (!headers_end(buf, n))
		return n >= NG_HTTP_REQ_MAX ? NG_HTTPREQ_TOO_LARGE : NG_HTTPREQ_MORE;
	eol = memchr(buf, '\n', n);
	/* METHOD SP TARGET SP HTTP/1.x [CR] LF */
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	if (!sp1 || sp1 == buf)
		return NG_HTTPREQ_BAD;
	mlen = (size_t)(sp1 - buf);
	for (size_t i = 0; i < mlen; i++)
		if (!tchar(buf[i]))
			return NG_HTTPREQ_BAD;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', (size_t)(eol - target));
	if (!sp2 || sp2 == target || *target != '/')
		return NG_HTTPREQ_BAD;
	tlen = (size_t)(sp2 - target);
	if ((size_t)(eol - sp2) < 9 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return NG_HTTPREQ_BAD;
	out->method = mlen == 3 && !memcmp(buf, "GET", 3)    ? NG_HTTP_GET
		      : mlen == 4 && !memcmp(buf, "HEAD", 4) ? NG_HTTP_HEAD
							     : NG_HTTP_OTHER;
	/* The query (and a fragment) say nothing to any endpoint here. */
	for (plen = 0; plen < tlen && target[plen] != '?' && target[plen] != '#'; plen++) {
	}
	if (plen < sizeof(out->path)) {
		memcpy(out->path, target, plen);
		out->path[plen] = '\0';
	}
	return NG_HTTPREQ_OK;
}

enum ng_http_endpoint ng_httpreq_endpoint(const struct ng_httpreq *req)
{
	if (!strcmp(req->path, "/healthz"))
		return NG_EP_HEALTHZ;
	if (!strcmp(req->path, "/readyz"))
		return NG_EP_READYZ;
	if (!strcmp(req->path, "/metrics"))
		return NG_EP_METRICS;
	return NG_EP_NONE;
}
