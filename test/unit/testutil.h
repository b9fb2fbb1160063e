/* Shared helpers for the unit tests (cmocka, no root, no network). */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <jansson.h>
/* cmocka.h uses these without including them: they come first. */
#include <setjmp.h> // IWYU pragma: keep
#include <stdarg.h> // IWYU pragma: keep
#include <stddef.h> // IWYU pragma: keep
#include <stdio.h>
#include <string.h>

/* A test includes testutil.h for cmocka (and testutil's line buffering). */
#include <cmocka.h> // IWYU pragma: export

#include "policy/config.h"
#include "base/err.h"

/* cmocka writes progress to stdout and verdicts to stderr: line-buffer
 * stdout so that, merged in a CI log, the lines keep their order. */
__attribute__((constructor)) static void tu_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* A valid plugin entry; tests change one thing at a time. */
#define BASE_CONF                                                                                          \
	"{\"cniVersion\":\"1.0.0\",\"name\":\"k8s\",\"type\":\"boxxkite-netguard\","                       \
	"\"capabilities\":{\"io.kubernetes.cri.pod-annotations\":true},"                                   \
	"\"enforce\":{\"namespaces\":[\"sandboxes\"],\"optInAnnotation\":true},"                           \
	"\"dns\":{\"servers\":[\"10.96.0.10\",\"fd00:10:96::a\"]},"                                        \
	"\"egress\":{\"names\":\"resolve\",\"allow\":[\"tcp://10.20.0.0/16:443\",\"s3.example.com:443\"]," \
	"\"envelope\":[\"10.0.0.0/8:443\",\"*.example.com:443\",\"udp://10.0.0.0/8:5000-6000\"]},"         \
	"\"ingress\":{\"ports\":[8080],\"sources\":[\"10.244.0.0/16\"],\"allowNode\":true}}"

static inline json_t *tu_json(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);

	if (!j)
		fail_msg("test JSON does not parse: %s: %s", je.text, text);
	return j;
}

/* BASE_CONF with one top-level key replaced (value is JSON text), or
 * removed when value is NULL. */
static inline json_t *tu_conf_with(const char *key, const char *value)
{
	json_t *root = tu_json(BASE_CONF);

	if (value)
		json_object_set_new(root, key, tu_json(value));
	else
		json_object_del(root, key);
	return root;
}

/* Parses a config; returns the CNI code (0 on success). Frees everything. */
static inline int tu_config_code(json_t *root, struct ng_err *err)
{
	struct ng_config cfg;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = ng_config_parse(root, &cfg, err);
	ng_config_free(&cfg);
	json_decref(root);
	return rc == 0 ? 0 : err->code;
}

/* Asserts that `msg` contains `needle`, printing both otherwise. */
#define assert_contains(msg, needle)                                            \
	do {                                                                    \
		if (!strstr((msg), (needle)))                                   \
			fail_msg("expected \"%s\" in \"%s\"", (needle), (msg)); \
	} while (0)

#endif
