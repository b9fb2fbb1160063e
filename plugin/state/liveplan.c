/* A running pod planned from a new entry. See liveplan.h. */
#include "state/liveplan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nft/render_host.h"
#include "policy/annotations.h"
#include "policy/select.h"
#include "state/recgrants.h"

/* The new stdin: the entry, and what the runtime gave for this pod. */
static json_t *new_stdin(const json_t *entry, const json_t *old_conf)
{
	json_t *c = json_deep_copy(entry), *v;

	if (!c)
		return NULL;
	if ((v = json_object_get(old_conf, "prevResult")) && json_object_set(c, "prevResult", v) < 0)
		goto fail;
	/* a copy: the grant annotation in it may be narrowed */
	if ((v = json_object_get(old_conf, "runtimeConfig")) &&
	    json_object_set_new(c, "runtimeConfig", json_deep_copy(v)) < 0)
		goto fail;
	return c;
fail:
	json_decref(c);
	return NULL;
}

/* The pod's grants as the new entry admits them (dropped ones listed). */
static int narrow(json_t *conf, const struct ng_config *cfg, ng_str_vec *dropped, struct ng_err *err)
{
	const char *g = ng_recgrants_get(conf);
	char *kept = NULL;
	int rc;

	if (!g)
		return 0;
	if (ng_annotations_narrow(g, cfg, &kept, dropped) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	rc = dropped->n ? ng_recgrants_set(conf, kept) : 0;
	free(kept);
	return rc < 0 ? ng_fail(err, NG_E_INTERNAL, "out of memory") : 0;
}

/* How the new entry alone would select the pod. */
static int selected(const json_t *conf, const struct ng_config *cfg, const struct ng_podref *pod,
		    enum ng_keep *mode, struct ng_err *err)
{
	struct ng_annotations ann;
	struct ng_err ignore = {0};
	bool enforced = false, audit = false;
	char reason[512];
	int rc = ng_annotations_parse(conf, cfg, &ann, err);

	/* An opt-in the entry no longer allows: not selected (and kept). */
	if (rc == 0 && ng_select(cfg, pod->ns, &ann, &enforced, &audit, reason, sizeof(reason), &ignore) < 0)
		enforced = false;
	ng_annotations_free(&ann);
	*mode = !enforced ? NG_KEEP_NONE : audit ? NG_KEEP_AUDIT : NG_KEEP_ENFORCE;
	return rc;
}

/* The record's fields that stay: identity, link facts, the decision. */
static int carry(const struct ng_record *old, struct ng_record *r, struct ng_err *err)
{
	snprintf(r->key, sizeof(r->key), "%s", old->key);
	snprintf(r->decision, sizeof(r->decision), "enforced");
	snprintf(r->nonce, sizeof(r->nonce), "%s", old->nonce);
	r->at_ms = old->at_ms;
	r->have_link = old->have_link;
	r->link = old->link;
	if (ng_podref_copy(&r->pod, &old->pod) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	return 0;
}

int ng_liveplan_build(const struct ng_record *old, const json_t *entry, uint64_t gen, struct ng_liveplan *out,
		      struct ng_err *err)
{
	enum ng_keep runs = old->audit ? NG_KEEP_AUDIT : NG_KEEP_ENFORCE, would = NG_KEEP_NONE;
	struct ng_config cfg;
	char host[256] = "";
	int rc;

	memset(out, 0, sizeof(*out));
	if (strcmp(old->decision, "enforced") != 0 || !old->conf)
		return ng_fail(err, NG_E_DECODE, "the record is not an enforced pod's");
	if (carry(old, &out->rec, err) < 0)
		return -1;
	out->rec.conf = new_stdin(entry, old->conf);
	if (!out->rec.conf)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	if (ng_config_parse(out->rec.conf, &cfg, err) < 0) {
		ng_config_free(&cfg);
		return -1;
	}
	rc = narrow(out->rec.conf, &cfg, &out->dropped, err);
	if (rc == 0)
		rc = selected(out->rec.conf, &cfg, &old->pod, &would, err);
	ng_config_free(&cfg);
	if (rc < 0)
		return -1;
	out->kept = would < runs;
	out->rec.keep = out->kept ? runs : NG_KEEP_NONE;
	out->rec.generation = gen;
	if (ng_recpolicy_build(&out->rec, NULL, NULL, &out->rp, err) < 0)
		return -1;
	out->rec.audit = out->rp.pp.audit;
	out->rec.learn = out->rp.cfg.learn;
	snprintf(out->rec.reason, sizeof(out->rec.reason), "%.255s", out->rp.pp.reason);
	if (out->rp.pp.policy.host &&
	    ng_host_table_name(old->pod.container_id, old->pod.ifname, host, sizeof(host)) != 0)
		return ng_fail(err, NG_E_ENV, "the pod's attachment makes no host-side table name");
	if (ng_record_tables(&out->rp.pp.policy, host, &out->rec.tables) < 0)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	return 0;
}

void ng_liveplan_free(struct ng_liveplan *lp)
{
	for (size_t i = 0; i < lp->dropped.n; i++)
		free(lp->dropped.v[i]);
	ng_vec_free(&lp->dropped);
	ng_recpolicy_free(&lp->rp);
	ng_record_free(&lp->rec);
	memset(lp, 0, sizeof(*lp));
}
