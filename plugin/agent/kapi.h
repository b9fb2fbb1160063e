/* The agent's client of the Kubernetes API: libcurl with TLS against the
 * cluster's CA, the ServiceAccount's token in a Bearer header (the token
 * file is read again for every request: the kubelet rotates it in place),
 * requests with bounded bodies, and a streamed watch cut into lines.
 * In-cluster configuration by default (KUBERNETES_SERVICE_HOST/PORT and
 * the ServiceAccount files); tests point it elsewhere (--kube-api, ...).
 * One handle per thread (libcurl's rule); no signals (CURLOPT_NOSIGNAL).
 * The token is never logged and never part of an error message. */
#ifndef NG_AGENT_KAPI_H
#define NG_AGENT_KAPI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define NG_KAPI_SA_DIR     "/var/run/secrets/kubernetes.io/serviceaccount"
#define NG_KAPI_BODY_MAX   ((size_t)64 << 20) /* a list of a node's pods is far below */
#define NG_KAPI_LINE_MAX   ((size_t)4 << 20)  /* one watch event (one pod) */
#define NG_KAPI_TIMEOUT_MS 15000              /* a request, not a watch */

struct ng_kapi_config {
	char url[512];    /* https://host:port, no trailing slash */
	char token[4096]; /* path of the token file */
	char ca[4096];    /* path of the CA bundle */
};

/* The in-cluster configuration from the environment and the
 * ServiceAccount directory: 0, or -1 with err (not in a cluster). */
int ng_kapi_incluster(struct ng_kapi_config *c, struct ng_err *err);

struct ng_kapi;

/* One client (one libcurl handle): for one thread only. */
struct ng_kapi *ng_kapi_new(const struct ng_kapi_config *c, struct ng_err *err);
void ng_kapi_free(struct ng_kapi *k);

/* A request: method, path (with query), body (NULL: none) of content
 * type ctype. *status the HTTP status, *body the response (malloc'd, NUL
 * terminated; the caller frees). 0 when a response came (any status), -1
 * with err when none did. */
int ng_kapi_call(struct ng_kapi *k, const char *method, const char *path, const char *ctype, const char *body,
		 long *status, char **resp, size_t *resp_len, struct ng_err *err);

/* A watch: GET `path`; fn(NULL, 0) once the stream is open (HTTP 200),
 * then each line of the stream to fn (return false to stop). Returns when the server ends the stream, a line does not fit, fn
 * says stop, *stop becomes true, or the connection stalls for
 * `stall_s` seconds. *status as above (the stream's HTTP status; a non-200
 * body is given to fn as one line). 0 when the stream ran and ended, -1
 * with err. */
typedef bool (*ng_kapi_line_fn)(const char *line, size_t len, void *ctx);
int ng_kapi_watch(struct ng_kapi *k, const char *path, ng_kapi_line_fn fn, void *ctx, atomic_bool *stop,
		  int stall_s, long *status, struct ng_err *err);

/* `s` with every byte but unreserved ones %-escaped into buf (query
 * values: a field selector's '='). */
void ng_kapi_escape(const char *s, char *buf, size_t len);

#endif
