#include "cni/handoff.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cni/decisionrec.h"
#include "cni/invstats.h"
#include "policy/config.h"

/* The entry's stateDir, read from stdin itself so that a refused config
 * (whose parse may have stopped before stateDir, leaving the default) still
 * lands where the node's agent looks: a refusal is a decision the node
 * should see. Else the parsed one, else the default. */
static const char *state_dir(const struct ng_handoff *h)
{
	const json_t *v = h->root ? json_object_get(h->root, "stateDir") : NULL;
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	if (s && s[0] == '/' && !strstr(s, "/../") && strlen(s) < 3900)
		return s;
	if (h->state_dir && *h->state_dir)
		return h->state_dir;
	return NG_DEFAULT_STATE_DIR;
}

static void decide(const struct ng_handoff *h, const char *dir)
{
	struct ng_decision d;
	struct timespec now;
	struct stat st;
	struct ng_err e = {0};

	memset(&d, 0, sizeof(d));
	if (!h->container_id || !h->ifname ||
	    ng_record_key(h->container_id, h->ifname, d.key, sizeof(d.key), &e) < 0)
		return; /* no pod to name */
	if (!h->log->decision[0])
		return;
	snprintf(d.pod_namespace, sizeof(d.pod_namespace), "%s", h->pod_namespace ? h->pod_namespace : "");
	snprintf(d.pod_name, sizeof(d.pod_name), "%s", h->pod_name ? h->pod_name : "");
	snprintf(d.container_id, sizeof(d.container_id), "%s", h->container_id);
	snprintf(d.ifname, sizeof(d.ifname), "%s", h->ifname);
	d.netns = (char *)h->netns; /* borrowed: d is not freed here */
	if (h->netns && stat(h->netns, &st) == 0)
		d.netns_ino = (uint64_t)st.st_ino;
	snprintf(d.decision, sizeof(d.decision), "%s", h->log->decision);
	snprintf(d.reason, sizeof(d.reason), "%s", h->log->reason);
	d.code = h->log->code;
	clock_gettime(CLOCK_REALTIME, &now);
	d.at_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	d.learn = h->learn;
	if (!strcmp(d.decision, "enforced")) {
		d.conf = (json_t *)h->conf;
		if (h->tables)
			d.tables = *h->tables; /* borrowed: not freed here */
	}
	ng_decision_write(dir, &d, &e);
}

void ng_handoff(const struct ng_handoff *h)
{
	const char *dir = state_dir(h);
	struct timespec now;
	char line[NG_INV_LINE_MAX];
	uint64_t us;
	int n;

	if (!h->verb || !*h->verb)
		return;
	if (!strcmp(h->verb, "ADD"))
		decide(h, dir);
	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (uint64_t)((now.tv_sec - h->log->start.tv_sec) * 1000000 +
			(now.tv_nsec - h->log->start.tv_nsec) / 1000);
	n = ng_inv_format(line, sizeof(line), h->verb, h->log->decision[0] ? h->log->decision : "none", us);
	if (n > 0)
		ng_inv_append(dir, line, (size_t)n);
}

void ng_handoff_forget(const struct ng_handoff *h)
{
	char key[256];
	struct ng_err e = {0};

	if (h->container_id && h->ifname &&
	    ng_record_key(h->container_id, h->ifname, key, sizeof(key), &e) == 0)
		ng_decision_remove(state_dir(h), key);
}
