#include "state/handoff.h"

#include <string.h>

#include "base/clock.h"
#include "base/decision_log.h"
#include "policy/config.h"
#include "state/invstats.h"
#include "state/record.h"

/* The entry's stateDir, read from stdin itself so that a refused config
 * (whose parse may have stopped before stateDir, leaving the default) still
 * lands where the node's agent looks: a refusal is a decision the node
 * should see. Else the parsed one, else the default. */
const char *ng_handoff_state_dir(const struct ng_handoff *h)
{
	const json_t *v = h->root ? json_object_get(h->root, "stateDir") : NULL;
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	if (s && s[0] == '/' && !strstr(s, "/../") && strlen(s) < 3900)
		return s;
	if (h->state_dir && *h->state_dir)
		return h->state_dir;
	return NG_DEFAULT_STATE_DIR;
}

/* ADD's decision into the pod's record. Only an enforced pod keeps its
 * configuration, tables and link facts: nothing enforces the others. */
static void decide(const struct ng_handoff *h, const char *dir)
{
	struct ng_record *r = h->record;
	struct ng_err e = {0};

	if (!r || !r->key[0] || !h->log->decision[0])
		return;
	snprintf(r->decision, sizeof(r->decision), "%s", h->log->decision);
	snprintf(r->reason, sizeof(r->reason), "%s", h->log->reason);
	r->code = h->log->code;
	r->at_ms = ng_wall_ms();
	if (strcmp(r->decision, "enforced") != 0) {
		json_decref(r->conf);
		r->conf = NULL;
		r->tables.n = 0;
		r->have_link = false;
		r->nonce[0] = '\0';
	}
	ng_record_write(dir, r, false, &e);
}

void ng_handoff(const struct ng_handoff *h)
{
	const char *dir = ng_handoff_state_dir(h);
	struct timespec now;
	char line[NG_INV_LINE_MAX];
	uint64_t us;
	int n;

	if (!h->verb || !*h->verb)
		return;
	if (!strcmp(h->verb, "ADD"))
		decide(h, dir);
	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (uint64_t)(ng_ts_us(&now) - ng_ts_us(&h->log->start));
	n = ng_inv_format(line, sizeof(line), h->verb, h->log->decision[0] ? h->log->decision : "none", us);
	if (n > 0)
		ng_inv_append(dir, line, (size_t)n);
}
