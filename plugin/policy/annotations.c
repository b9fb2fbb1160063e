#include "policy/annotations.h"
#include "policy/metadata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Checks one grant against the platform: prefix floor, metadata, and
 * containment in a single egress.envelope entry. */
static int check_grant(const struct ng_config *cfg, const struct ng_dest *g, struct ng_err *err)
{
	char what[NG_DEST_TEXT_MAX + 64];

	snprintf(what, sizeof(what), "%s grant \"%s\"", NG_ANN_EGRESS, g->text);
	if (g->kind == NG_HOST_PREFIX) {
		if (ng_check_prefix_min(cfg, &g->net, what, NG_E_ENVELOPE, err) < 0 ||
		    ng_check_not_metadata(cfg, &g->net, what, NG_E_ENVELOPE, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < cfg->envelope.n; i++)
		if (ng_dest_within(g, &cfg->envelope.v[i]))
			return 0;
	if (cfg->envelope.n == 0)
		return ng_fail(err, NG_E_ENVELOPE,
			       "%s: egress.envelope is empty on this node, so no per-pod grant is allowed",
			       what);
	return ng_fail(err, NG_E_ENVELOPE,
		       "%s: outside egress.envelope (a grant must lie inside one envelope entry: same "
		       "protocol, port range and address range or name)",
		       what);
}

/* Splits the comma-separated egress annotation into validated grants. */
static int parse_egress(const char *value, const struct ng_config *cfg, struct ng_annotations *out,
			struct ng_err *err)
{
	char *copy = strdup(value), *tok;
	int rc = 0;
	size_t idx = 0;

	if (!copy)
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	/* strtok would silently merge ",,": walk by hand so an empty entry is
	 * reported, since it usually means a template variable was empty. */
	for (tok = copy;; idx++) {
		char *comma = strchr(tok, ',');
		char *start = tok, *end;
		struct ng_dest d;

		if (comma)
			*comma = '\0';
		while (*start == ' ' || *start == '\t')
			start++;
		end = start + strlen(start);
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (!*start) {
			rc = ng_fail(err, NG_E_ANNOTATION, "%s: entry %zu is empty", NG_ANN_EGRESS, idx + 1);
			break;
		}
		if (idx >= NG_ANN_GRANTS_MAX) {
			rc = ng_fail(err, NG_E_ANNOTATION, "%s: more than %d entries", NG_ANN_EGRESS,
				     NG_ANN_GRANTS_MAX);
			break;
		}
		/* Wildcard grants only where names are learned from answers. */
		if (ng_dest_parse(start, cfg->learn, NG_E_ANNOTATION, &d, err) < 0) {
			ng_err_prefix(err, "%s: ", NG_ANN_EGRESS);
			rc = -1;
			break;
		}
		if (check_grant(cfg, &d, err) < 0) {
			rc = -1;
			break;
		}
		if (ng_vec_push(&out->grants, &d) < 0) {
			rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
			break;
		}
		if (!comma)
			break;
		tok = comma + 1;
	}
	free(copy);
	return rc;
}

int ng_annotations_parse(const json_t *root, const struct ng_config *cfg, struct ng_annotations *out,
			 struct ng_err *err)
{
	const json_t *rc, *ann, *v;
	const char *k;

	memset(out, 0, sizeof(*out));
	out->enforce = -1;
	rc = json_object_get(root, "runtimeConfig");
	if (!rc)
		return 0;
	if (!json_is_object(rc))
		return ng_fail(err, NG_E_CONFIG, "runtimeConfig: must be an object");
	ann = json_object_get(rc, NG_ANNOTATIONS_CAP);
	if (!ann || json_is_null(ann))
		return 0;
	if (!json_is_object(ann))
		return ng_fail(err, NG_E_ANNOTATION, "runtimeConfig.%s: must be an object of strings",
			       NG_ANNOTATIONS_CAP);
	out->passed = true;

	json_object_foreach((json_t *)ann, k, v) {
		const char *val;

		if (strncasecmp(k, NG_ANN_PREFIX, strlen(NG_ANN_PREFIX)) != 0)
			continue; /* not ours */
		/* Kubernetes compares keys byte for byte, so Netguard.Boxxkite.io/enforce
		 * is another key: skipping it would silently leave a pod unenforced
		 * (or without its grant) that its author meant to select. */
		if (strncmp(k, NG_ANN_PREFIX, strlen(NG_ANN_PREFIX)) != 0)
			return ng_fail(err, NG_E_ANNOTATION,
				       "annotation %.128s: differs from netguard's prefix %s only in case; "
				       "keys are case-sensitive (write %s... exactly)",
				       k, NG_ANN_PREFIX, NG_ANN_PREFIX);
		if (!json_is_string(v))
			return ng_fail(err, NG_E_ANNOTATION, "annotation %s: value must be a string", k);
		val = json_string_value(v);
		if (strlen(val) > NG_ANN_VALUE_MAX)
			return ng_fail(err, NG_E_ANNOTATION, "annotation %s: value longer than %d bytes", k,
				       NG_ANN_VALUE_MAX);
		if (strstr(val, "CHANGEME"))
			return ng_fail(err, NG_E_ANNOTATION, "annotation %s: holds the placeholder CHANGEME",
				       k);

		if (strcmp(k, NG_ANN_ENFORCE) == 0) {
			if (strcmp(val, "true") == 0)
				out->enforce = 1;
			else if (strcmp(val, "false") == 0)
				out->enforce = 0;
			else
				return ng_fail(err, NG_E_ANNOTATION,
					       "annotation %s: must be \"true\" or \"false\", not \"%.64s\"",
					       k, val);
		} else if (strcmp(k, NG_ANN_EGRESS) == 0) {
			if (parse_egress(val, cfg, out, err) < 0)
				return -1;
		} else {
			return ng_fail(err, NG_E_ANNOTATION,
				       "annotation %s: unknown netguard key (known: %s, %s)", k,
				       NG_ANN_ENFORCE, NG_ANN_EGRESS);
		}
	}
	return 0;
}

void ng_annotations_free(struct ng_annotations *a)
{
	ng_vec_free(&a->grants);
}

/* One entry of the value, as ADD would take it under `cfg`: 0 admitted,
 * -1 with why in err. */
static int admitted(const char *entry, const struct ng_config *cfg, struct ng_err *err)
{
	struct ng_dest d;

	if (!*entry)
		return ng_fail(err, NG_E_ANNOTATION, "empty entry");
	if (ng_dest_parse(entry, cfg->learn, NG_E_ANNOTATION, &d, err) < 0)
		return -1;
	return check_grant(cfg, &d, err);
}

static int push_str(ng_str_vec *v, const char *fmt, const char *a, const char *b)
{
	char *s = NULL;

	if (asprintf(&s, fmt, a, b) < 0)
		return -1;
	if (ng_vec_push(v, &s) < 0) {
		free(s);
		return -1;
	}
	return 0;
}

int ng_annotations_narrow(const char *value, const struct ng_config *cfg, char **kept, ng_str_vec *dropped)
{
	char *copy = strdup(value ? value : ""), *tok, *out = calloc(1, strlen(value ? value : "") + 1);
	size_t n = 0;
	int rc = 0;

	*kept = NULL;
	if (!copy || !out) {
		free(copy);
		free(out);
		return -1;
	}
	for (tok = copy; value && rc == 0;) {
		char *comma = strchr(tok, ','), *start = tok, *end;
		struct ng_err why = {0};

		if (comma)
			*comma = '\0';
		while (*start == ' ' || *start == '\t')
			start++;
		end = start + strlen(start);
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (admitted(start, cfg, &why) == 0) {
			n += (size_t)sprintf(out + n, "%s%s", n ? "," : "", start);
		} else if (push_str(dropped, "%s (%s)", start, why.msg) < 0) {
			rc = -1;
		}
		if (!comma)
			break;
		tok = comma + 1;
	}
	free(copy);
	if (rc < 0 || n == 0) {
		free(out);
		return rc;
	}
	*kept = out;
	return 0;
}
