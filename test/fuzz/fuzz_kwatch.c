/* Fuzz target: one line of a Kubernetes watch stream, and the same bytes as
 * a pod list (agent/kpod.h): whatever the API sends, a value or a refusal,
 * never a crash. Invariants: a parsed pod has a name and a namespace; an
 * unreadable pod carries no grant. */
#include <stddef.h>
#include <stdint.h>

#include "agent/kpod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ng_kwatch_event e;
	struct ng_err err;
	ng_kpod_vec v = {0};
	char rv[NG_KPOD_RV_MAX];
	size_t skipped;

	if (ng_kwatch_parse((const char *)data, size, &e, &err) == 0) {
		if (e.type != NG_KW_ERROR && e.type != NG_KW_BOOKMARK && (!e.pod.name[0] || !e.pod.ns[0]))
			__builtin_trap();
		if (!e.pod.readable && e.pod.egress)
			__builtin_trap();
		ng_kwatch_event_free(&e);
	}
	if (ng_kpod_list_parse((const char *)data, size, &v, rv, &skipped, &err) == 0 && !rv[0])
		__builtin_trap();
	ng_kpod_vec_free(&v);
	return 0;
}
