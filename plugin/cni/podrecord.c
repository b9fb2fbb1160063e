#include "cni/podrecord.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"

int ng_record_key(const char *container_id, const char *ifname, char *buf, size_t len, struct ng_err *err)
{
	size_t n = strlen(container_id);

	if (n == 0 || n > 128 || container_id[0] == '.' ||
	    strspn(container_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != n)
		return ng_fail(err, NG_E_ENV,
			       "CNI_CONTAINERID \"%.64s\" holds characters other than letters, digits, '_', "
			       "'-' and '.'",
			       container_id);
	if (!*ifname || strchr(ifname, '/') || strlen(ifname) >= 16)
		return ng_fail(err, NG_E_ENV, "CNI_IFNAME \"%.40s\" is not a valid interface name", ifname);
	snprintf(buf, len, "%s@%s", container_id, ifname);
	return 0;
}

static int mkdir_one(const char *path, struct ng_err *err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return ng_fail(err, NG_E_INTERNAL, "stateDir: cannot create %s: %s", path, strerror(errno));
	return 0;
}

int ng_state_dirs(const char *state_dir, struct ng_err *err)
{
	char p[4200];

	/* Parents as mkdir -p would (stateDir is an absolute path). */
	snprintf(p, sizeof(p), "%s", state_dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir_one(p, err) < 0)
			return -1;
		*s = '/';
	}
	if (mkdir_one(state_dir, err) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/" NG_PODS_DIR, state_dir);
	if (mkdir_one(p, err) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/" NG_READY_DIR, state_dir);
	return mkdir_one(p, err);
}

static int subdir(const char *state_dir, const char *sub, struct ng_err *err)
{
	char p[4200];

	snprintf(p, sizeof(p), "%s/%s", state_dir, sub);
	return ng_dir_open(p, err);
}

int ng_record_write(const char *state_dir, struct ng_podrecord *r, struct ng_err *err)
{
	uint8_t raw[NG_NONCE_LEN / 2];
	json_t *o, *tables;
	char name[300], *text;
	int dfd, rc;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return ng_fail(err, NG_E_INTERNAL, "getrandom: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(r->nonce + 2 * i, 3, "%02x", raw[i]);
	tables = json_array();
	for (size_t i = 0; tables && i < r->tables.n; i++) {
		const struct ng_record_table *t = &r->tables.v[i];

		json_array_append_new(
			tables, json_pack("{s:s,s:s,s:s}", "netns", t->in_node ? "node" : "pod", "family",
					  t->family == NFPROTO_NETDEV ? "netdev" : "inet", "table", t->name));
	}
	o = json_pack("{s:i,s:s,s:s,s:s,s:s,s:I,s:I,s:s,s:o,s:O}", "version", NG_RECORD_VERSION, "nonce",
		      r->nonce, "containerId", r->container_id, "ifname", r->ifname, "netns", r->netns,
		      "netnsDev", (json_int_t)r->netns_dev, "netnsIno", (json_int_t)r->netns_ino, "cniArgs",
		      r->cni_args, "tables", tables, "conf", r->conf);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return ng_fail(err, NG_E_INTERNAL, "out of memory writing the pod's state record");
	/* The directories exist after the first pod: create them only then. */
	dfd = subdir(state_dir, NG_PODS_DIR, NULL);
	if (dfd < 0 &&
	    (ng_state_dirs(state_dir, err) < 0 || (dfd = subdir(state_dir, NG_PODS_DIR, err)) < 0)) {
		free(text);
		return -1;
	}
	snprintf(name, sizeof(name), "%s.json", r->key);
	rc = ng_write_volatile_at(dfd, name, text, strlen(text), 0600, err);
	close(dfd);
	free(text);
	if (rc < 0)
		ng_err_prefix(err, "stateDir %s: ", state_dir);
	return rc;
}

static const char *jstr(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int copy_str(char *dst, size_t len, const char *src, const char *what, struct ng_err *err)
{
	if (!src || strlen(src) >= len)
		return ng_fail(err, NG_E_DECODE, "state record: %s missing or too long", what);
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

int ng_record_read(const char *path, struct ng_podrecord *r, struct ng_err *err)
{
	json_error_t je;
	json_t *o, *tables, *t;
	size_t i;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	o = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return ng_fail(err, NG_E_DECODE, "state record %s: %s", path, je.text);
	if (json_integer_value(json_object_get(o, "version")) != NG_RECORD_VERSION) {
		ng_fail(err, NG_E_DECODE, "state record %s: unknown version", path);
		goto out;
	}
	if (copy_str(r->nonce, sizeof(r->nonce), jstr(o, "nonce"), "nonce", err) < 0 ||
	    copy_str(r->container_id, sizeof(r->container_id), jstr(o, "containerId"), "containerId", err) <
		    0 ||
	    copy_str(r->ifname, sizeof(r->ifname), jstr(o, "ifname"), "ifname", err) < 0 ||
	    copy_str(r->netns, sizeof(r->netns), jstr(o, "netns"), "netns", err) < 0 ||
	    copy_str(r->cni_args, sizeof(r->cni_args), jstr(o, "cniArgs"), "cniArgs", err) < 0 ||
	    ng_record_key(r->container_id, r->ifname, r->key, sizeof(r->key), err) < 0)
		goto out;
	r->netns_dev = (uint64_t)json_integer_value(json_object_get(o, "netnsDev"));
	r->netns_ino = (uint64_t)json_integer_value(json_object_get(o, "netnsIno"));
	tables = json_object_get(o, "tables");
	json_array_foreach(tables, i, t) {
		struct ng_record_table rt = {0};
		const char *ns = jstr(t, "netns"), *fam = jstr(t, "family");

		if (!ns || !fam || copy_str(rt.name, sizeof(rt.name), jstr(t, "table"), "table", err) < 0) {
			ng_fail(err, NG_E_DECODE, "state record %s: tables[%zu] malformed", path, i);
			goto out;
		}
		rt.in_node = !strcmp(ns, "node");
		rt.family = !strcmp(fam, "netdev") ? NFPROTO_NETDEV : NFPROTO_INET;
		if (ng_vec_push(&r->tables, &rt) < 0) {
			ng_fail(err, NG_E_INTERNAL, "out of memory");
			goto out;
		}
	}
	r->conf = json_incref(json_object_get(o, "conf"));
	if (!json_is_object(r->conf)) {
		ng_fail(err, NG_E_DECODE, "state record %s: conf missing", path);
		goto out;
	}
	rc = 0;
out:
	json_decref(o);
	if (rc < 0)
		ng_record_free(r);
	return rc;
}

void ng_record_free(struct ng_podrecord *r)
{
	json_decref(r->conf);
	r->conf = NULL;
	ng_vec_free(&r->tables);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits (bounded) until check(data) is true, looking every 100 us at
 * first, backing off to every 5 ms. Not inotify: closing an inotify
 * instance waits for an SRCU grace period (10-15 ms measured here), which
 * alone would cost ADD fifty times its budget; the agent has usually
 * written the file before ADD looks (it picks the pod up while ADD builds
 * the table). */
static bool wait_until(int timeout_ms, bool (*check)(void *), void *data)
{
	long end = now_ms() + timeout_ms;
	useconds_t pause = 100;

	for (;;) {
		if (check(data))
			return true;
		if (now_ms() >= end)
			return false;
		usleep(pause);
		if (pause < 5000)
			pause *= 2;
	}
}

struct ready_ctx {
	const char *path, *nonce;
};

static bool ready_has_nonce(void *data)
{
	struct ready_ctx *c = data;
	char buf[NG_NONCE_LEN + 2] = {0};
	int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n == NG_NONCE_LEN && memcmp(buf, c->nonce, NG_NONCE_LEN) == 0;
}

static bool ready_gone(void *data)
{
	struct ready_ctx *c = data;

	return access(c->path, F_OK) < 0 && errno == ENOENT;
}

int ng_record_wait_ready(const char *state_dir, const char *key, const char *nonce, int timeout_ms,
			 struct ng_err *err)
{
	char dir[4200], path[4500];
	struct ready_ctx c = {path, nonce};

	snprintf(dir, sizeof(dir), "%s/" NG_READY_DIR, state_dir);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (wait_until(timeout_ms, ready_has_nonce, &c))
		return 0;
	return ng_fail(err, NG_E_TRY_AGAIN,
		       "the node agent did not pick the pod up within %d ms (egress.names \"learn\": is the "
		       "boxxkite-netguard agent running, with stateDir %s?)",
		       timeout_ms, state_dir);
}

int ng_record_remove(const char *state_dir, const char *key, int wait_ms, struct ng_err *err)
{
	char dir[4200], path[4500], name[300];
	struct ready_ctx c = {path, NULL};
	int dfd;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	if (access(dir, F_OK) < 0)
		return 0; /* no state dir: nothing was ever recorded */
	dfd = ng_dir_open(dir, err);
	if (dfd < 0)
		return -1;
	snprintf(name, sizeof(name), "%s.json", key);
	/* No fsync: state under /run does not outlive a reboot. */
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT) {
		int e = errno;

		close(dfd);
		return ng_fail(err, NG_E_INTERNAL, "stateDir %s: removing %s: %s", state_dir, name,
			       strerror(e));
	}
	close(dfd);
	snprintf(dir, sizeof(dir), "%s/" NG_READY_DIR, state_dir);
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	/* Best effort: only a serving agent removes ready files. */
	if (wait_ms > 0 && ng_agent_serving(state_dir) == 1)
		wait_until(wait_ms, ready_gone, &c);
	return 0;
}

int ng_record_set_ready(const char *state_dir, const char *key, const char *nonce, struct ng_err *err)
{
	int dfd = subdir(state_dir, NG_READY_DIR, err), rc;

	if (dfd < 0)
		return -1;
	rc = ng_write_volatile_at(dfd, key, nonce, strlen(nonce), 0644, err);
	close(dfd);
	return rc;
}

void ng_record_clear_ready(const char *state_dir, const char *key)
{
	char path[4500];

	snprintf(path, sizeof(path), "%s/" NG_READY_DIR "/%s", state_dir, key);
	unlink(path);
}

int ng_agent_serving(const char *state_dir)
{
	char path[4200];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/" NG_AGENT_LOCK, state_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* A shared lock we can take means no agent holds the exclusive one. */
	rc = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK ? 1 : 0;
	close(fd);
	return rc;
}
