/* What the agent writes to the Kubernetes API, as JSON bodies: an Event on
 * a pod (core/v1, POST .../events) and our readiness-gate condition (a
 * strategic merge patch of pods/status: conditions merge by type, so the
 * kubelet's own conditions are left alone). Pure; the message of either
 * is cut to a bound and stripped of control characters: it carries the
 * CNI error's reason and grant entries (destinations), never an
 * annotation's value as a whole, a token or a header. */
#ifndef NG_AGENT_KOBJ_H
#define NG_AGENT_KOBJ_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define NG_KOBJ_MSG_MAX   1024 /* bytes of an event's or condition's message */
#define NG_KOBJ_COMPONENT "boxxkite-netguard"

struct ng_kobj_pod {
	const char *ns, *name, *uid; /* uid may be NULL or "" (not known yet) */
};

/* The Event: `type` "Normal" or "Warning", `reason` one CamelCase word
 * (NetguardEnforced, NetguardGrantRefused, ...), `node` the reporting
 * instance; `now_ms` unix time. NULL out of memory. */
json_t *ng_kobj_event(const struct ng_kobj_pod *pod, const char *type, const char *reason, const char *msg,
		      const char *node, int64_t now_ms);

/* {"status":{"conditions":[{type, status, reason, message,
 * lastTransitionTime}]}}. NULL out of memory. */
json_t *ng_kobj_condition_patch(bool status, const char *reason, const char *msg, int64_t now_ms);

/* RFC 3339 UTC with seconds ("2026-12-02T04:55:00Z"), as the API wants
 * for metav1.Time. */
void ng_kobj_time(int64_t ms, char buf[32]);

/* `in` cut to NG_KOBJ_MSG_MAX bytes (on a UTF-8 boundary), control
 * characters as spaces. */
void ng_kobj_clean(const char *in, char *out, size_t len);

#endif
