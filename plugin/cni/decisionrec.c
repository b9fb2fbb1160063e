#include "cni/decisionrec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(json_t *o, const char *k, const char *v)
{
	if (v && *v)
		json_object_set_new(o, k, json_string(v));
}

json_t *ng_decision_to_json(const struct ng_decision *d)
{
	json_t *o = json_object(), *tables = json_array();

	if (!o || !tables) {
		json_decref(o);
		json_decref(tables);
		return NULL;
	}
	json_object_set_new(o, "version", json_integer(1));
	put(o, "key", d->key);
	put(o, "podNamespace", d->pod_namespace);
	put(o, "podName", d->pod_name);
	put(o, "containerId", d->container_id);
	put(o, "ifname", d->ifname);
	put(o, "netns", d->netns);
	json_object_set_new(o, "netnsIno", json_integer((json_int_t)d->netns_ino));
	put(o, "decision", d->decision);
	put(o, "reason", d->reason);
	json_object_set_new(o, "code", json_integer(d->code));
	json_object_set_new(o, "at", json_integer((json_int_t)d->at_ms));
	json_object_set_new(o, "learn", json_boolean(d->learn));
	for (size_t i = 0; i < d->tables.n; i++) {
		const struct ng_record_table *t = &d->tables.v[i];

		json_array_append_new(
			tables, json_pack("{s:s,s:s,s:s}", "netns", t->in_node ? "node" : "pod", "family",
					  t->family == NFPROTO_NETDEV ? "netdev" : "inet", "table", t->name));
	}
	json_object_set_new(o, "tables", tables);
	if (d->conf)
		json_object_set(o, "conf", d->conf);
	return o;
}

static int str_field(const json_t *o, const char *k, char *dst, size_t len, bool need, struct ng_err *err)
{
	const json_t *v = json_object_get(o, k);

	if (!v && !need) {
		dst[0] = '\0';
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) >= len)
		return ng_fail(err, NG_E_DECODE, "decision record: %s missing or too long", k);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int ng_decision_from_json(const json_t *o, struct ng_decision *d, struct ng_err *err)
{
	const json_t *tables = json_object_get(o, "tables"), *t, *conf = json_object_get(o, "conf");
	size_t i;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(o) || json_integer_value(json_object_get(o, "version")) != 1)
		return ng_fail(err, NG_E_DECODE, "decision record: not one (version 1)");
	if (str_field(o, "key", d->key, sizeof(d->key), true, err) < 0 ||
	    str_field(o, "podNamespace", d->pod_namespace, sizeof(d->pod_namespace), false, err) < 0 ||
	    str_field(o, "podName", d->pod_name, sizeof(d->pod_name), false, err) < 0 ||
	    str_field(o, "containerId", d->container_id, sizeof(d->container_id), true, err) < 0 ||
	    str_field(o, "ifname", d->ifname, sizeof(d->ifname), true, err) < 0 ||
	    str_field(o, "decision", d->decision, sizeof(d->decision), true, err) < 0 ||
	    str_field(o, "reason", d->reason, sizeof(d->reason), false, err) < 0)
		return -1;
	/* Heap, not a PATH_MAX array: the watch keeps one record per pod. */
	if (json_is_string(json_object_get(o, "netns")) &&
	    !(d->netns = strdup(json_string_value(json_object_get(o, "netns")))))
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	d->netns_ino = (uint64_t)json_integer_value(json_object_get(o, "netnsIno"));
	d->code = (int)json_integer_value(json_object_get(o, "code"));
	d->at_ms = (int64_t)json_integer_value(json_object_get(o, "at"));
	d->learn = json_is_true(json_object_get(o, "learn"));
	json_array_foreach(tables, i, t) {
		struct ng_record_table rt = {0};
		const json_t *ns = json_object_get(t, "netns"), *fam = json_object_get(t, "family");

		if (!json_is_string(ns) || !json_is_string(fam) ||
		    str_field(t, "table", rt.name, sizeof(rt.name), true, err) < 0) {
			ng_decision_free(d);
			return ng_fail(err, NG_E_DECODE, "decision record: tables[%zu] malformed", i);
		}
		rt.in_node = !strcmp(json_string_value(ns), "node");
		rt.family = !strcmp(json_string_value(fam), "netdev") ? NFPROTO_NETDEV : NFPROTO_INET;
		if (ng_vec_push(&d->tables, &rt) < 0) {
			ng_decision_free(d);
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
		}
	}
	if (json_is_object(conf))
		d->conf = json_incref((json_t *)conf);
	return 0;
}

void ng_decision_free(struct ng_decision *d)
{
	free(d->netns);
	d->netns = NULL;
	ng_vec_free(&d->tables);
	json_decref(d->conf);
	d->conf = NULL;
}

static void file_name(const char *key, bool refused, char *out, size_t len)
{
	snprintf(out, len, "%s%s", key, refused ? NG_REFUSED_SUFFIX : ".json");
}

static bool is_refused(const char *decision)
{
	return strcmp(decision, "enforced") != 0 && strcmp(decision, "skipped") != 0;
}

int ng_decision_write(const char *state_dir, const struct ng_decision *d, struct ng_err *err)
{
	char dir[4200], name[320], tmp[340];
	bool refused = is_refused(d->decision);
	json_t *o;
	char *text;
	int dfd, fd, rc = -1;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/" NG_DECISIONS_DIR, state_dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0 && errno == ENOENT) {
		/* stateDir itself missing: no agent on this node. */
		if (access(state_dir, F_OK) < 0 || (mkdir(dir, 0755) < 0 && errno != EEXIST))
			return 0;
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (dfd < 0)
		return ng_fail(err, NG_E_INTERNAL, "%s: %s", dir, strerror(errno));
	o = ng_decision_to_json(d);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text) {
		close(dfd);
		return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	file_name(d->key, refused, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	n = strlen(text);
	if (fd < 0 || write(fd, text, n) != (ssize_t)n) {
		ng_fail(err, NG_E_INTERNAL, "%s/%s: %s", dir, tmp, strerror(errno));
		if (fd >= 0)
			unlinkat(dfd, tmp, 0);
	} else if (renameat(dfd, tmp, dfd, name) < 0) {
		ng_fail(err, NG_E_INTERNAL, "%s/%s: %s", dir, name, strerror(errno));
		unlinkat(dfd, tmp, 0);
	} else {
		rc = 0;
		/* A pod that got through after a refusal is not refused anymore. */
		if (!refused) {
			file_name(d->key, true, name, sizeof(name));
			unlinkat(dfd, name, 0);
		}
	}
	if (fd >= 0)
		close(fd);
	close(dfd);
	free(text);
	return rc;
}

void ng_decision_remove(const char *state_dir, const char *key)
{
	char path[4600];

	snprintf(path, sizeof(path), "%s/" NG_DECISIONS_DIR "/%s.json", state_dir, key);
	unlink(path);
}

int ng_decision_read(const char *path, struct ng_decision *d, struct ng_err *err)
{
	json_error_t je;
	json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	const char *base = strrchr(path, '/');
	char key[256];
	bool refused = false;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!o)
		return ng_fail(err, NG_E_DECODE, "decision record %s: %s", path, je.text);
	rc = ng_decision_from_json(o, d, err);
	json_decref(o);
	if (rc == 0 && ng_decision_name(base ? base + 1 : path, key, sizeof(key), &refused)) {
		d->refused_file = refused;
		/* The file's name is the key: a record copied under another
		 * name is not that pod's. */
		if (strcmp(key, d->key) != 0) {
			ng_decision_free(d);
			return ng_fail(err, NG_E_DECODE, "decision record %s: key %s does not match its name",
				       path, d->key);
		}
	}
	return rc;
}

bool ng_decision_name(const char *name, char *key, size_t len, bool *refused)
{
	size_t n = strlen(name), rs = strlen(NG_REFUSED_SUFFIX);

	if (name[0] == '.' || n < 6)
		return false;
	*refused = n > rs && !strcmp(name + n - rs, NG_REFUSED_SUFFIX);
	n -= *refused ? rs : 5;
	if (!*refused && strcmp(name + n, ".json") != 0)
		return false;
	if (n == 0 || n >= len)
		return false;
	memcpy(key, name, n);
	key[n] = '\0';
	return true;
}
