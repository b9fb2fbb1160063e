/* agent/httpreq.c: the request line of what a client sends --listen, as
 * the HTTP thread reads it in pieces: more wanted until the headers end,
 * GET and HEAD told from any other method, the query ignored, and what is
 * not HTTP/1.x or never ends refused. */
#include "testutil.h"

#include <string.h>

#include "agent/httpreq.h"

static enum ng_httpreq_status parse(const char *s, struct ng_httpreq *r)
{
	return ng_httpreq_parse(s, strlen(s), r);
}

static void test_requests(void **state)
{
	(void)state;
	struct ng_httpreq r;

	assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r), NG_HTTPREQ_OK);
	assert_int_equal(r.method, NG_HTTP_GET);
	assert_string_equal(r.path, "/metrics");
	assert_int_equal(ng_httpreq_endpoint(&r), NG_EP_METRICS);
	assert_int_equal(parse("HEAD /readyz?verbose=1&x HTTP/1.0\n\n", &r), NG_HTTPREQ_OK);
	assert_int_equal(r.method, NG_HTTP_HEAD);
	assert_string_equal(r.path, "/readyz");
	assert_int_equal(ng_httpreq_endpoint(&r), NG_EP_READYZ);
	assert_int_equal(parse("GET /healthz#top HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_OK);
	assert_int_equal(ng_httpreq_endpoint(&r), NG_EP_HEALTHZ);
	/* Another method is parsed (405 follows), never served. */
	assert_int_equal(parse("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", &r), NG_HTTPREQ_OK);
	assert_int_equal(r.method, NG_HTTP_OTHER);
	assert_int_equal(parse("GETX /metrics HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_OK);
	assert_int_equal(r.method, NG_HTTP_OTHER);
	/* Unknown or too long a path: no endpoint. */
	assert_int_equal(parse("GET /metricsx HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_OK);
	assert_int_equal(ng_httpreq_endpoint(&r), NG_EP_NONE);
	char longpath[200] = "GET /metrics";
	memset(longpath + 12, 'a', 100);
	strcpy(longpath + 112, " HTTP/1.1\r\n\r\n");
	assert_int_equal(parse(longpath, &r), NG_HTTPREQ_OK);
	assert_int_equal(ng_httpreq_endpoint(&r), NG_EP_NONE);
}

static void test_pieces_and_refusals(void **state)
{
	(void)state;
	struct ng_httpreq r;
	const char *req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

	/* A byte at a time (the slow client): more, until the empty line. */
	for (size_t n = 0; n < strlen(req); n++)
		assert_int_equal(ng_httpreq_parse(req, n, &r), NG_HTTPREQ_MORE);
	assert_int_equal(ng_httpreq_parse(req, strlen(req), &r), NG_HTTPREQ_OK);
	/* Never ending: refused at the bound, not read on. */
	static char big[NG_HTTP_REQ_MAX];
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(ng_httpreq_parse(big, sizeof(big) - 1, &r), NG_HTTPREQ_MORE);
	assert_int_equal(ng_httpreq_parse(big, sizeof(big), &r), NG_HTTPREQ_TOO_LARGE);
	/* Not HTTP/1.x. */
	assert_int_equal(parse("\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse("GET\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse("GET /metrics\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse("GET metrics HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse("GET /metrics HTTP/2.0\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse("get /metrics HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_BAD);
	assert_int_equal(parse(" /metrics HTTP/1.1\r\n\r\n", &r), NG_HTTPREQ_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_pieces_and_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
