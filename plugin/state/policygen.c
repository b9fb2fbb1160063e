/* The node's policy generation. See policygen.h. */
#include "state/policygen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsutil.h"

/* What the runtime adds to our entry for one pod (libcni's buildOneConfig
 * and injectRuntimeConfig): not the platform's policy. */
static bool per_pod(const char *key)
{
	return !strcmp(key, "prevResult") || !strcmp(key, "runtimeConfig");
}

json_t *ng_entry_of(const json_t *conf)
{
	json_t *e = json_object(), *v;
	const char *k;

	if (!e)
		return NULL;
	json_object_foreach((json_t *)conf, k, v) {
		if (!per_pod(k) && json_object_set(e, k, v) < 0) {
			json_decref(e);
			return NULL;
		}
	}
	return e;
}

bool ng_entry_is(const json_t *conf, const json_t *entry)
{
	const char *k;
	json_t *v;
	size_t n = 0;

	if (!json_is_object(conf) || !json_is_object(entry))
		return false;
	json_object_foreach((json_t *)conf, k, v) {
		if (per_pod(k))
			continue;
		if (!json_equal(v, json_object_get(entry, k)))
			return false;
		n++;
	}
	return n == json_object_size(entry);
}

static void add_key(char *buf, size_t len, size_t *n, const char *a, const char *b)
{
	if (*n >= len)
		return;
	*n += (size_t)snprintf(buf + *n, len - *n, "%s%s%s%s", *n ? ", " : "", a, b ? "." : "", b ? b : "");
}

/* The keys of object `x` whose values differ in `y` (or are missing
 * there), then those only `y` has, as "parent.key" (parent NULL: "key").
 * Objects both have are named whole when `into` is false; with `into`,
 * their own keys are, by `inner` (one level: the entry's sections). */
static void keys(const json_t *x, const json_t *y, const char *parent, bool into, char *buf, size_t len,
		 size_t *n,
		 void (*inner)(const json_t *, const json_t *, const char *, char *, size_t, size_t *))
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)x, k, v) {
		const json_t *w = json_object_get(y, k);

		if (json_equal(v, w))
			continue;
		if (into && json_is_object(v) && json_is_object(w))
			inner(v, w, k, buf, len, n);
		else
			add_key(buf, len, n, parent ? parent : k, parent ? k : NULL);
	}
	json_object_foreach((json_t *)y, k, v) {
		if (!json_object_get(x, k))
			add_key(buf, len, n, parent ? parent : k, parent ? k : NULL);
	}
}

static void section(const json_t *x, const json_t *y, const char *parent, char *buf, size_t len, size_t *n)
{
	keys(x, y, parent, false, buf, len, n, NULL);
}

void ng_entry_changes(const json_t *a, const json_t *b, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (json_is_object(a) && json_is_object(b))
		keys(a, b, NULL, true, buf, len, &n, section);
	else if (!json_equal(a, b))
		snprintf(buf, len, "the whole entry");
}

int ng_policygen_read(const char *state_dir, struct ng_policygen *pg, struct ng_err *err)
{
	char path[4200], *text = NULL;
	const char *file;
	json_error_t je;
	json_t *o, *entry;
	size_t len;

	memset(pg, 0, sizeof(*pg));
	snprintf(path, sizeof(path), "%s/" NG_POLICY_FILE, state_dir);
	if (access(path, F_OK) < 0)
		return 1;
	if (ng_read_path(path, (size_t)4 << 20, &text, &len, err) < 0)
		return -1;
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!o)
		return ng_fail(err, NG_E_DECODE, "%s: %s", path, je.text);
	entry = json_object_get(o, "entry");
	file = json_string_value(json_object_get(o, "file"));
	if (!json_is_object(entry) || json_integer_value(json_object_get(o, "generation")) <= 0) {
		json_decref(o);
		return ng_fail(err, NG_E_DECODE, "%s: not a policy generation", path);
	}
	pg->gen = (uint64_t)json_integer_value(json_object_get(o, "generation"));
	pg->at_ms = (int64_t)json_integer_value(json_object_get(o, "at"));
	snprintf(pg->file, sizeof(pg->file), "%s", file ? file : "");
	pg->entry = json_incref(entry);
	json_decref(o);
	return 0;
}

int ng_policygen_write(const char *state_dir, const struct ng_policygen *pg, struct ng_err *err)
{
	json_t *o = json_pack("{s:I,s:s,s:I,s:O}", "generation", (json_int_t)pg->gen, "file", pg->file, "at",
			      (json_int_t)pg->at_ms, "entry", pg->entry);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int dfd, rc;

	json_decref(o);
	if (!text)
		return ng_fail(err, NG_E_INTERNAL, "out of memory writing " NG_POLICY_FILE);
	dfd = ng_dir_open(state_dir, err);
	rc = dfd < 0 ? -1 : ng_write_volatile_at(dfd, NG_POLICY_FILE, text, strlen(text), 0644, err);
	if (dfd >= 0)
		close(dfd);
	free(text);
	return rc;
}

void ng_policygen_free(struct ng_policygen *pg)
{
	json_decref(pg->entry);
	memset(pg, 0, sizeof(*pg));
}

uint64_t ng_policygen_stamp(const char *state_dir, const json_t *conf)
{
	struct ng_policygen pg;
	struct ng_err err = {0};
	uint64_t gen = 0;

	if (!state_dir[0] || ng_policygen_read(state_dir, &pg, &err) != 0)
		return 0;
	if (ng_entry_is(conf, pg.entry))
		gen = pg.gen;
	ng_policygen_free(&pg);
	return gen;
}
