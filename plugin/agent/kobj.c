/* Event and condition bodies for the Kubernetes API. See kobj.h. */
#include "agent/kobj.h"

#include <stdio.h>
#include <time.h>

#include "agent/kpod.h"

void ng_kobj_time(int64_t ms, char buf[32])
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void ng_kobj_clean(const char *in, char *out, size_t len)
{
	size_t n = 0, max = len - 1 < NG_KOBJ_MSG_MAX ? len - 1 : NG_KOBJ_MSG_MAX;

	for (; in && in[n] && n < max; n++) {
		unsigned char c = (unsigned char)in[n];

		out[n] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	/* Never half a UTF-8 sequence at the cut: back to its lead byte. */
	if (in && in[n]) {
		size_t k = n;

		while (k > 0 && ((unsigned char)out[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0 && ((unsigned char)out[k - 1] & 0x80))
			n = k - 1;
	}
	out[n] = '\0';
}

json_t *ng_kobj_event(const struct ng_kobj_pod *pod, const char *type, const char *reason, const char *msg,
		      const char *node, int64_t now_ms)
{
	char ts[32], clean[NG_KOBJ_MSG_MAX + 1], gen[300];
	json_t *inv;

	ng_kobj_time(now_ms, ts);
	ng_kobj_clean(msg, clean, sizeof(clean));
	/* generateName: the API names it (pod names are <= 253; the name
	 * part of generateName is cut by the API to fit). */
	snprintf(gen, sizeof(gen), "%.200s.netguard-", pod->name);
	inv = json_pack("{s:s, s:s, s:s}", "apiVersion", "v1", "kind", "Pod", "namespace", pod->ns);
	if (!inv)
		return NULL;
	if (json_object_set_new(inv, "name", json_string(pod->name)) < 0 ||
	    (pod->uid && pod->uid[0] && json_object_set_new(inv, "uid", json_string(pod->uid)) < 0)) {
		json_decref(inv);
		return NULL;
	}
	return json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:i}",
		"apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", pod->ns,
		"involvedObject", inv, "type", type, "reason", reason, "message", clean, "source",
		"component", NG_KOBJ_COMPONENT, "host", node ? node : "", "reportingComponent",
		NG_KOBJ_COMPONENT, "reportingInstance", node ? node : "", "firstTimestamp", ts,
		"lastTimestamp", ts, "count", 1);
}

json_t *ng_kobj_condition_patch(bool status, const char *reason, const char *msg, int64_t now_ms)
{
	char ts[32], clean[NG_KOBJ_MSG_MAX + 1];

	ng_kobj_time(now_ms, ts);
	ng_kobj_clean(msg, clean, sizeof(clean));
	return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type",
			 NG_KPOD_CONDITION, "status", status ? "True" : "False", "reason", reason, "message",
			 clean, "lastTransitionTime", ts);
}
