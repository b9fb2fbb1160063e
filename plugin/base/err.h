/* Errors as values: every fallible function fills a struct ng_err and returns
 * -1, and the CNI layer turns it into the spec's error JSON. The code is the
 * CNI error code the runtime will see, so it is chosen where the error is
 * found, by the code that knows what went wrong. */
#ifndef NG_ERR_H
#define NG_ERR_H

/* CNI spec codes (1-99 are reserved by the spec). */
#define NG_E_VERSION            1  /* incompatible cniVersion */
#define NG_E_ENV                4  /* invalid necessary environment variables */
#define NG_E_DECODE             6  /* failed to decode content */
#define NG_E_CONFIG             7  /* invalid network config */
#define NG_E_TRY_AGAIN          11 /* try again later */
#define NG_E_PLUGIN_UNAVAILABLE 50 /* STATUS: cannot serve ADD (spec 1.1) */
/* Ours (100+). Documented in README.md "Error codes". */
#define NG_E_ENVELOPE           100 /* annotation grant outside egress.envelope */
#define NG_E_ANNOTATION         101 /* malformed or unknown netguard annotation */
#define NG_E_OPT_IN             102 /* pod asks for enforcement this node cannot give */
#define NG_E_NO_HOST            103 /* hostMirror required, and the pod has no per-pod host device */
#define NG_E_ATTACHED           104 /* another attachment of this plugin governs the pod's namespace */
#define NG_E_KERNEL             110 /* the kernel refused or failed the transaction */
#define NG_E_CHECK              111 /* CHECK: ruleset missing or different */
#define NG_E_NETNS              112 /* cannot use the pod's network namespace */
#define NG_E_INTERNAL           120 /* out of memory, broken invariant */

struct ng_err {
	int code;
	char msg[512];
	char details[1024];
};

/* Sets code and msg (printf-style); returns -1 so callers can
 * `return ng_fail(err, ...)`. A NULL err is allowed and ignored. */
int ng_fail(struct ng_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets details (printf-style) without touching code or msg. */
void ng_err_details(struct ng_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prefixes msg with context ("egress.allow[2]: " + old msg). */
void ng_err_prefix(struct ng_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
