#include "state/record.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "nft/render.h"

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

int ng_record_tables(const struct ng_policy *p, const char *host_table, ng_record_table_vec *out)
{
	struct ng_record_table t = {.family = NFPROTO_INET, .name = NG_TABLE};

	out->n = 0;
	if (ng_vec_push(out, &t) < 0)
		return -1;
	t.family = NFPROTO_NETDEV;
	if (p->raw_guard && ng_vec_push(out, &t) < 0)
		return -1;
	if (!p->host)
		return 0;
	/* The agent writes what it learns into the host side too, and the
	 * drift watch reads it. */
	t.in_node = true;
	snprintf(t.name, sizeof(t.name), "%s", host_table);
	return ng_vec_push(out, &t);
}

const struct ng_record_table *ng_record_host_table(const struct ng_record *r)
{
	for (size_t i = 0; i < r->tables.n; i++)
		if (r->tables.v[i].in_node)
			return &r->tables.v[i];
	return NULL;
}

/* ---- JSON ------------------------------------------------------------------ */

static void put(json_t *o, const char *k, const char *v)
{
	if (v && *v)
		json_object_set_new(o, k, json_string(v));
}

static json_t *link_to_json(const struct ng_link_facts *f)
{
	json_t *o = json_object(), *ll = json_array();
	char buf[NG_IP_STRLEN];

	if (!o || !ll) {
		json_decref(o);
		json_decref(ll);
		return NULL;
	}
	json_object_set_new(o, "ifindex", json_integer(f->ifindex));
	if (f->have_mac) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", f->mac[0], f->mac[1], f->mac[2],
			 f->mac[3], f->mac[4], f->mac[5]);
		json_object_set_new(o, "mac", json_string(buf));
	}
	for (size_t i = 0; i < f->n_link_local; i++) {
		ng_ip_format(&f->link_local[i], buf, sizeof(buf));
		json_array_append_new(ll, json_string(buf));
	}
	json_object_set_new(o, "linkLocal", ll);
	put(o, "peer", f->peer);
	json_object_set_new(o, "peerIfindex", json_integer(f->peer_ifindex));
	return o;
}

json_t *ng_record_to_json(const struct ng_record *r)
{
	json_t *o = json_object(), *pod = json_object(), *tables = json_array();

	if (!o || !pod || !tables) {
		json_decref(o);
		json_decref(pod);
		json_decref(tables);
		return NULL;
	}
	json_object_set_new(o, "version", json_integer(NG_RECORD_VERSION));
	put(o, "key", r->key);
	put(pod, "namespace", r->pod.ns);
	put(pod, "name", r->pod.name);
	put(pod, "containerId", r->pod.container_id);
	put(pod, "ifname", r->pod.ifname);
	put(pod, "netns", r->pod.netns);
	json_object_set_new(pod, "netnsDev", json_integer((json_int_t)r->pod.netns_dev));
	json_object_set_new(pod, "netnsIno", json_integer((json_int_t)r->pod.netns_ino));
	json_object_set_new(o, "pod", pod);
	put(o, "decision", r->decision);
	put(o, "reason", r->reason);
	json_object_set_new(o, "code", json_integer(r->code));
	json_object_set_new(o, "at", json_integer((json_int_t)r->at_ms));
	json_object_set_new(o, "learn", json_boolean(r->learn));
	if (r->audit)
		json_object_set_new(o, "audit", json_true());
	if (r->generation)
		json_object_set_new(o, "generation", json_integer((json_int_t)r->generation));
	if (r->keep != NG_KEEP_NONE)
		json_object_set_new(o, "keep", json_string(r->keep == NG_KEEP_AUDIT ? "audit" : "enforce"));
	put(o, "nonce", r->nonce);
	for (size_t i = 0; i < r->tables.n; i++) {
		const struct ng_record_table *t = &r->tables.v[i];

		json_array_append_new(
			tables, json_pack("{s:s,s:s,s:s}", "netns", t->in_node ? "node" : "pod", "family",
					  t->family == NFPROTO_NETDEV ? "netdev" : "inet", "table", t->name));
	}
	json_object_set_new(o, "tables", tables);
	if (r->have_link)
		json_object_set_new(o, "link", link_to_json(&r->link));
	if (r->conf)
		json_object_set(o, "conf", r->conf);
	return o;
}

static int str_field(const json_t *o, const char *k, char *dst, size_t len, bool need, struct ng_err *err)
{
	const json_t *v = json_object_get(o, k);

	if (!v && !need) {
		dst[0] = '\0';
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) >= len ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return ng_fail(err, NG_E_DECODE, "pod record: %s missing or too long", k);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "02:42:0a:00:00:05", exactly: lowercase, two digits a byte. */
static int parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return -1;
	for (size_t k = 0; k < 6; k++) {
		int hi = hex(s[3 * k]), lo = hex(s[3 * k + 1]);

		if (hi < 0 || lo < 0 || (k < 5 && s[3 * k + 2] != ':'))
			return -1;
		mac[k] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

static int link_from_json(const json_t *o, struct ng_link_facts *f, struct ng_err *err)
{
	const json_t *ll = json_object_get(o, "linkLocal"), *a;
	const char *mac = json_string_value(json_object_get(o, "mac"));
	size_t i;

	memset(f, 0, sizeof(*f));
	if (!json_is_object(o) || !json_is_array(ll) || json_array_size(ll) > NG_LINK_LOCAL_MAX)
		return ng_fail(err, NG_E_DECODE, "pod record: link malformed");
	f->ifindex = (int)json_integer_value(json_object_get(o, "ifindex"));
	f->peer_ifindex = (int)json_integer_value(json_object_get(o, "peerIfindex"));
	if (mac) {
		if (parse_mac(mac, f->mac) < 0)
			return ng_fail(err, NG_E_DECODE, "pod record: link.mac malformed");
		f->have_mac = true;
	}
	json_array_foreach(ll, i, a) {
		if (!json_is_string(a) || ng_ip_parse(json_string_value(a), &f->link_local[i]) < 0)
			return ng_fail(err, NG_E_DECODE, "pod record: link.linkLocal[%zu] malformed", i);
		f->n_link_local++;
	}
	return str_field(o, "peer", f->peer, sizeof(f->peer), false, err);
}

static int tables_from_json(const json_t *tables, ng_record_table_vec *out, struct ng_err *err)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tables, i, t) {
		struct ng_record_table rt = {0};
		const char *ns = json_string_value(json_object_get(t, "netns"));
		const char *fam = json_string_value(json_object_get(t, "family"));

		if (!ns || !fam || str_field(t, "table", rt.name, sizeof(rt.name), true, err) < 0)
			return ng_fail(err, NG_E_DECODE, "pod record: tables[%zu] malformed", i);
		rt.in_node = !strcmp(ns, "node");
		rt.family = !strcmp(fam, "netdev") ? NFPROTO_NETDEV : NFPROTO_INET;
		if (ng_vec_push(out, &rt) < 0)
			return ng_fail(err, NG_E_INTERNAL, "out of memory");
	}
	return 0;
}

int ng_record_from_json(const json_t *o, struct ng_record *r, struct ng_err *err)
{
	const json_t *pod = json_object_get(o, "pod"), *conf = json_object_get(o, "conf");
	const json_t *link = json_object_get(o, "link");
	const char *netns, *keep;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o) || json_integer_value(json_object_get(o, "version")) != NG_RECORD_VERSION)
		return ng_fail(err, NG_E_DECODE, "pod record: not one (version %d)", NG_RECORD_VERSION);
	if (!json_is_object(pod))
		return ng_fail(err, NG_E_DECODE, "pod record: pod missing");
	if (str_field(o, "key", r->key, sizeof(r->key), true, err) < 0 ||
	    str_field(pod, "namespace", r->pod.ns, sizeof(r->pod.ns), false, err) < 0 ||
	    str_field(pod, "name", r->pod.name, sizeof(r->pod.name), false, err) < 0 ||
	    str_field(pod, "containerId", r->pod.container_id, sizeof(r->pod.container_id), true, err) < 0 ||
	    str_field(pod, "ifname", r->pod.ifname, sizeof(r->pod.ifname), true, err) < 0 ||
	    str_field(o, "decision", r->decision, sizeof(r->decision), true, err) < 0 ||
	    str_field(o, "reason", r->reason, sizeof(r->reason), false, err) < 0 ||
	    str_field(o, "nonce", r->nonce, sizeof(r->nonce), false, err) < 0)
		goto out;
	/* Heap, not a PATH_MAX array: the watch keeps one record per pod. */
	netns = json_string_value(json_object_get(pod, "netns"));
	if (netns && !(r->pod.netns = strdup(netns))) {
		ng_fail(err, NG_E_INTERNAL, "out of memory");
		goto out;
	}
	r->pod.netns_dev = (uint64_t)json_integer_value(json_object_get(pod, "netnsDev"));
	r->pod.netns_ino = (uint64_t)json_integer_value(json_object_get(pod, "netnsIno"));
	r->code = (int)json_integer_value(json_object_get(o, "code"));
	r->at_ms = (int64_t)json_integer_value(json_object_get(o, "at"));
	r->learn = json_is_true(json_object_get(o, "learn"));
	r->audit = json_is_true(json_object_get(o, "audit"));
	r->generation = (uint64_t)json_integer_value(json_object_get(o, "generation"));
	keep = json_string_value(json_object_get(o, "keep"));
	if (keep && strcmp(keep, "audit") != 0 && strcmp(keep, "enforce") != 0) {
		ng_fail(err, NG_E_DECODE, "pod record: keep \"%.32s\" is neither audit nor enforce", keep);
		goto out;
	}
	r->keep = !keep ? NG_KEEP_NONE : !strcmp(keep, "audit") ? NG_KEEP_AUDIT : NG_KEEP_ENFORCE;
	if (tables_from_json(json_object_get(o, "tables"), &r->tables, err) < 0)
		goto out;
	if (link) {
		if (link_from_json(link, &r->link, err) < 0)
			goto out;
		r->have_link = true;
	}
	if (json_is_object(conf))
		r->conf = json_incref((json_t *)conf);
	rc = 0;
out:
	if (rc < 0)
		ng_record_free(r);
	return rc;
}

void ng_record_free(struct ng_record *r)
{
	ng_podref_free(&r->pod);
	ng_vec_free(&r->tables);
	json_decref(r->conf);
	r->conf = NULL;
}

int ng_record_new_nonce(struct ng_record *r, struct ng_err *err)
{
	uint8_t raw[NG_NONCE_LEN / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return ng_fail(err, NG_E_INTERNAL, "getrandom: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(r->nonce + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/* ---- files ----------------------------------------------------------------- */

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

static void file_name(const char *key, bool refused, char *out, size_t len)
{
	snprintf(out, len, "%s%s", key, refused ? NG_REFUSED_SUFFIX : ".json");
}

static bool is_refused(const char *decision)
{
	return strcmp(decision, "enforced") != 0 && strcmp(decision, "skipped") != 0 &&
	       strcmp(decision, "pending") != 0;
}

/* pods/ of stateDir, made when `create` (and stateDir with it); -1 with
 * err; -2 when stateDir is absent and not to be made. */
static int pods_dir(const char *state_dir, bool create, struct ng_err *err)
{
	char dir[4200];
	int dfd;

	snprintf(dir, sizeof(dir), "%s/" NG_PODS_DIR, state_dir);
	dfd = ng_dir_open(dir, NULL);
	if (dfd >= 0)
		return dfd;
	if (create) {
		if (ng_state_dirs(state_dir, err) < 0)
			return -1;
	} else if (access(state_dir, F_OK) < 0) {
		return -2; /* stateDir itself missing: no agent on this node */
	} else if (mkdir_one(dir, err) < 0) {
		return -1;
	}
	return ng_dir_open(dir, err);
}

/* pods/ of stateDir open in *dfd and the record's text in *text (free()
 * it, close *dfd): 0, -2 when stateDir is absent and not to be made, or
 * -1 with err. */
static int open_text(const char *state_dir, const struct ng_record *r, bool create, int *dfd, char **text,
		     struct ng_err *err)
{
	json_t *o;

	*dfd = pods_dir(state_dir, create, err);
	if (*dfd < 0)
		return *dfd;
	o = ng_record_to_json(r);
	*text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (*text)
		return 0;
	close(*dfd);
	return ng_fail(err, NG_E_INTERNAL, "out of memory writing the pod record");
}

int ng_record_write(const char *state_dir, const struct ng_record *r, bool create, struct ng_err *err)
{
	bool refused = is_refused(r->decision);
	char name[320], *text;
	int dfd, rc = open_text(state_dir, r, create, &dfd, &text, err);

	if (rc < 0)
		return rc == -2 ? 0 : -1;
	file_name(r->key, refused, name, sizeof(name));
	rc = ng_write_volatile_at(dfd, name, text, strlen(text), 0600, err);
	/* A pod that got through after a refusal is not refused anymore. */
	if (rc == 0 && !refused) {
		file_name(r->key, true, name, sizeof(name));
		unlinkat(dfd, name, 0);
	}
	close(dfd);
	free(text);
	if (rc < 0)
		ng_err_prefix(err, "stateDir %s: ", state_dir);
	return rc;
}

int ng_record_replace(const char *state_dir, const struct ng_record *r, uint64_t expect_ino,
		      uint64_t *new_ino, struct ng_err *err)
{
	struct ng_expect e = {.exists = true, .ino = expect_ino};
	char name[320], *text;
	struct stat st;
	int dfd, rc = open_text(state_dir, r, false, &dfd, &text, err);

	if (rc < 0)
		return rc == -2 ? 1 : -1;
	file_name(r->key, false, name, sizeof(name));
	rc = ng_write_volatile_expect_at(dfd, name, text, strlen(text), 0600, &e, err);
	free(text);
	if (rc < 0 && err->code == NG_E_TRY_AGAIN) {
		rc = 1; /* gone (DEL) or rewritten (a retried ADD): theirs */
		memset(err, 0, sizeof(*err));
	}
	if (rc == 0)
		*new_ino = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? (uint64_t)st.st_ino : 0;
	close(dfd);
	if (rc < 0)
		ng_err_prefix(err, "stateDir %s: ", state_dir);
	return rc;
}

int ng_record_read(const char *path, struct ng_record *r, struct ng_err *err)
{
	const char *base = strrchr(path, '/');
	char *text = NULL, key[256];
	bool refused = false;
	json_error_t je;
	size_t len;
	json_t *o;
	int rc;

	memset(r, 0, sizeof(*r));
	if (ng_read_path(path, NG_RECORD_MAX, &text, &len, err) < 0)
		return -1;
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!o)
		return ng_fail(err, NG_E_DECODE, "pod record %s: %s", path, je.text);
	rc = ng_record_from_json(o, r, err);
	json_decref(o);
	if (rc < 0) {
		ng_err_prefix(err, "%s: ", path);
		return -1;
	}
	/* The file's name is the key: a record copied under another name is
	 * not that pod's. */
	if (!ng_record_name(base ? base + 1 : path, key, sizeof(key), &refused) || strcmp(key, r->key) != 0) {
		ng_fail(err, NG_E_DECODE, "pod record %s: key %s does not match its name", path, r->key);
		ng_record_free(r);
		return -1;
	}
	r->refused_file = refused;
	return 0;
}

bool ng_record_name(const char *name, char *key, size_t len, bool *refused)
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
