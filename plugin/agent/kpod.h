/* The Kubernetes API's pod objects, as the agent's watch reads them
 * (agent/kwatch.h): a list response, one line of a watch stream, and from
 * a pod only what the grants need (who it is, its node, its grant
 * annotation, whether it declares our readiness gate). Pure: bytes in,
 * plain data out; every malformed input is a value, never a crash (the
 * API is not trusted to be well-formed: test/fuzz/fuzz_kpod.c). */
#ifndef NG_AGENT_KPOD_H
#define NG_AGENT_KPOD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/vec.h"

#define NG_KPOD_CONDITION "netguard.boxxkite.io/enforced"
#define NG_KPOD_RV_MAX    64

/* One pod: strings owned (NULL for egress: no grant annotation). */
struct ng_kpod {
	char ns[256], name[256], uid[128], node[256];
	char rv[NG_KPOD_RV_MAX];
	/* false: metadata.annotations is not a map of strings, or the grant
	 * annotation is not a string: the pod keeps what it has. */
	bool readable;
	char *egress;
	bool gate; /* spec.readinessGates names NG_KPOD_CONDITION */
};
typedef NG_VEC(struct ng_kpod) ng_kpod_vec;

enum ng_kwatch_type {
	NG_KW_ADDED,
	NG_KW_MODIFIED,
	NG_KW_DELETED,
	NG_KW_BOOKMARK,
	NG_KW_ERROR,
};

struct ng_kwatch_event {
	enum ng_kwatch_type type;
	struct ng_kpod pod; /* ADDED, MODIFIED, DELETED; BOOKMARK: rv only */
	int code;           /* ERROR: the Status's code (410: relist) */
	char message[256];  /* ERROR: the Status's message */
};

/* One pod object into `out` (0), or -1 with err (no name, no namespace). */
int ng_kpod_from_json(const json_t *obj, struct ng_kpod *out, struct ng_err *err);
void ng_kpod_free(struct ng_kpod *p);

/* A list response (PodList): its pods and metadata.resourceVersion. A pod
 * item that does not parse is skipped and counted in *skipped. */
int ng_kpod_list_parse(const char *buf, size_t len, ng_kpod_vec *out, char rv[NG_KPOD_RV_MAX],
		       size_t *skipped, struct ng_err *err);
void ng_kpod_vec_free(ng_kpod_vec *v);

/* One line of a watch stream. 0, or -1 with err (not JSON, unknown type,
 * an object that is no pod). */
int ng_kwatch_parse(const char *line, size_t len, struct ng_kwatch_event *out, struct ng_err *err);
void ng_kwatch_event_free(struct ng_kwatch_event *e);

#endif
