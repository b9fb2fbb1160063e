/* The Kubernetes API client over libcurl. See kapi.h. */
#include "agent/kapi.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ng_kapi {
	struct ng_kapi_config c;
	CURL *h;
	char errbuf[CURL_ERROR_SIZE];
};

int ng_kapi_incluster(struct ng_kapi_config *c, struct ng_err *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");

	memset(c, 0, sizeof(*c));
	if (!host || !host[0])
		return ng_fail(err, NG_E_ENV, "KUBERNETES_SERVICE_HOST is not set (not in a cluster)");
	if (!port || !port[0])
		port = "443";
	if (strspn(port, "0123456789") != strlen(port) || strlen(host) > 256 ||
	    strspn(host, "0123456789abcdefABCDEF.:-") != strlen(host))
		return ng_fail(err, NG_E_ENV, "KUBERNETES_SERVICE_HOST/PORT is not an address and a port");
	snprintf(c->url, sizeof(c->url), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	snprintf(c->token, sizeof(c->token), "%s/token", NG_KAPI_SA_DIR);
	snprintf(c->ca, sizeof(c->ca), "%s/ca.crt", NG_KAPI_SA_DIR);
	return 0;
}

struct ng_kapi *ng_kapi_new(const struct ng_kapi_config *c, struct ng_err *err)
{
	struct ng_kapi *k = calloc(1, sizeof(*k));

	if (!k || !(k->h = curl_easy_init())) {
		free(k);
		ng_fail(err, NG_E_INTERNAL, "cannot make a libcurl handle");
		return NULL;
	}
	k->c = *c;
	return k;
}

void ng_kapi_free(struct ng_kapi *k)
{
	if (!k)
		return;
	curl_easy_cleanup(k->h);
	free(k);
}

void ng_kapi_escape(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s && n + 4 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("-._~", ch))
			buf[n++] = (char)ch;
		else
			n += (size_t)snprintf(buf + n, len - n, "%%%02X", ch);
	}
	buf[n] = '\0';
}

/* The token, read again now (rotated in place by the kubelet). */
static int auth_header(const struct ng_kapi *k, char *buf, size_t len, struct ng_err *err)
{
	char tok[8192];
	int fd = open(k->c.token, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return ng_fail(err, NG_E_ENV, "the token file %.300s: %s", k->c.token, strerror(errno));
	n = read(fd, tok, sizeof(tok) - 1);
	close(fd);
	if (n <= 0 || (size_t)n >= sizeof(tok) - 1)
		return ng_fail(err, NG_E_ENV, "the token file %.300s is empty or too long", k->c.token);
	while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' '))
		n--;
	tok[n] = '\0';
	if (strpbrk(tok, "\r\n"))
		return ng_fail(err, NG_E_ENV, "the token file %.300s holds more than one line", k->c.token);
	snprintf(buf, len, "Authorization: Bearer %s", tok);
	explicit_bzero(tok, sizeof(tok));
	return 0;
}

struct body {
	char *p;
	size_t n, cap, max;
	bool over;
};

/* Appends (growing by doubling, bounded by max); len, or 0 to abort. */
static size_t append(struct body *b, const char *data, size_t len)
{
	if (b->n + len + 1 > b->max) {
		b->over = true;
		return 0;
	}
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;

		while (cap < b->n + len + 1)
			cap *= 2;
		if (!(np = realloc(b->p, cap)))
			return 0;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
	b->p[b->n] = '\0';
	return len;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	return append(ctx, data, size * nmemb);
}

/* The handle set up for one request to `path`; *hdrs to be freed. */
static int prepare(struct ng_kapi *k, const char *path, const char *ctype, struct curl_slist **hdrs,
		   struct ng_err *err)
{
	char url[8192], auth[8300], ct[128];

	*hdrs = NULL;
	if (snprintf(url, sizeof(url), "%s%s", k->c.url, path) >= (int)sizeof(url))
		return ng_fail(err, NG_E_INTERNAL, "request path too long");
	if (auth_header(k, auth, sizeof(auth), err) < 0)
		return -1;
	curl_easy_reset(k->h);
	*hdrs = curl_slist_append(*hdrs, auth);
	explicit_bzero(auth, sizeof(auth));
	*hdrs = curl_slist_append(*hdrs, "Accept: application/json");
	if (ctype) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		*hdrs = curl_slist_append(*hdrs, ct);
	}
	if (!*hdrs)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	k->errbuf[0] = '\0';
	curl_easy_setopt(k->h, CURLOPT_URL, url);
	curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(k->h, CURLOPT_CAINFO, k->c.ca);
	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(k->h, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(k->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k->h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(k->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k->h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(k->h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(k->h, CURLOPT_TCP_KEEPIDLE, 10L);
	curl_easy_setopt(k->h, CURLOPT_TCP_KEEPINTVL, 5L);
	curl_easy_setopt(k->h, CURLOPT_ERRORBUFFER, k->errbuf);
	curl_easy_setopt(k->h, CURLOPT_USERAGENT, "boxxkite-netguard-agent");
	return 0;
}

static int failed(struct ng_kapi *k, CURLcode rc, struct ng_err *err)
{
	return ng_fail(err, NG_E_TRY_AGAIN, "%s: %.300s", k->c.url,
		       k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc));
}

int ng_kapi_call(struct ng_kapi *k, const char *method, const char *path, const char *ctype, const char *body,
		 long *status, char **resp, size_t *resp_len, struct ng_err *err)
{
	struct curl_slist *hdrs;
	struct body b = {.max = NG_KAPI_BODY_MAX};
	CURLcode rc;

	*status = 0;
	*resp = NULL;
	*resp_len = 0;
	if (prepare(k, path, ctype, &hdrs, err) < 0) {
		curl_slist_free_all(hdrs);
		return -1;
	}
	curl_easy_setopt(k->h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(k->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(k->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	curl_easy_setopt(k->h, CURLOPT_TIMEOUT_MS, (long)NG_KAPI_TIMEOUT_MS);
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &b);
	rc = curl_easy_perform(k->h);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		free(b.p);
		if (b.over)
			return ng_fail(err, NG_E_DECODE, "%s%.200s: the response is over %zu bytes", k->c.url,
				       path, NG_KAPI_BODY_MAX);
		return failed(k, rc, err);
	}
	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, status);
	*resp = b.p ? b.p : strdup("");
	*resp_len = b.n;
	return *resp ? 0 : ng_fail(err, NG_E_INTERNAL, "out of memory");
}

struct stream {
	CURL *h;
	ng_kapi_line_fn fn;
	void *ctx;
	atomic_bool *stop;
	struct body line;
	bool halted, too_long;
};

static size_t on_stream(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct stream *s = ctx;
	size_t len = size * nmemb;

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t part = nl ? (size_t)(nl - (data + i)) : len - i;

		if (part && append(&s->line, data + i, part) != part) {
			s->too_long = s->line.over;
			return 0;
		}
		i += part;
		if (!nl)
			break;
		i++; /* the newline */
		if (s->line.n && !s->fn(s->line.p, s->line.n, s->ctx)) {
			s->halted = true;
			return 0;
		}
		s->line.n = 0;
	}
	return len;
}

/* The end of the headers (an empty line): a 200 is the stream open. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct stream *s = ctx;
	size_t len = size * nmemb;
	long code = 0;

	if ((len == 2 && data[0] == '\r') || (len == 1 && data[0] == '\n')) {
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200)
			s->fn(NULL, 0, s->ctx);
	}
	return len;
}

/* Called by libcurl about once a second even when nothing flows. */
static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct stream *s = ctx;

	(void)a, (void)b, (void)c, (void)d;
	return atomic_load(s->stop) ? 1 : 0;
}

int ng_kapi_watch(struct ng_kapi *k, const char *path, ng_kapi_line_fn fn, void *ctx, atomic_bool *stop,
		  int stall_s, long *status, struct ng_err *err)
{
	struct curl_slist *hdrs;
	struct stream s = {.h = k->h, .fn = fn, .ctx = ctx, .stop = stop, .line = {.max = NG_KAPI_LINE_MAX}};
	CURLcode rc;
	int ret = 0;

	*status = 0;
	if (prepare(k, path, NULL, &hdrs, err) < 0) {
		curl_slist_free_all(hdrs);
		return -1;
	}
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(k->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k->h, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(k->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(k->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(k->h, CURLOPT_XFERINFODATA, &s);
	/* A watch that stays silent longer than any bookmark interval is a
	 * dead connection (an API server gone without a FIN). */
	curl_easy_setopt(k->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(k->h, CURLOPT_LOW_SPEED_TIME, (long)stall_s);
	rc = curl_easy_perform(k->h);
	curl_slist_free_all(hdrs);
	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, status);
	/* What is left without a newline: a Status body of a refused watch. */
	if (rc == CURLE_OK && s.line.n)
		fn(s.line.p, s.line.n, ctx);
	if (s.too_long)
		ret = ng_fail(err, NG_E_DECODE, "a watch event over %zu bytes", NG_KAPI_LINE_MAX);
	else if (rc != CURLE_OK && !s.halted && !atomic_load(stop))
		ret = failed(k, rc, err);
	free(s.line.p);
	return ret;
}
