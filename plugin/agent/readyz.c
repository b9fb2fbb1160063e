#include "agent/readyz.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/confdir.h"
#include "policy/config.h"

/* Same bytes, compared in blocks (no whole-file buffers). */
static bool same_file(int a, int b)
{
	char x[65536], y[65536];

	for (;;) {
		ssize_t n = read(a, x, sizeof(x)), m;

		if (n < 0)
			return false;
		m = n ? read(b, y, (size_t)n) : read(b, y, 1);
		if (m != n || memcmp(x, y, (size_t)n) != 0)
			return false;
		if (n == 0)
			return true;
	}
}

static void eval_binary(struct ng_readyz *z, struct ng_ready *r)
{
	char path[4200];
	struct stat a, b;
	uint64_t key[6];
	int fa, fb;

	snprintf(path, sizeof(path), "%s/" NG_PLUGIN_TYPE, z->bin_dir);
	r->binary = false;
	fa = open(path, O_RDONLY | O_CLOEXEC);
	if (fa < 0) {
		snprintf(r->binary_msg, sizeof(r->binary_msg), "%.300s: %s", path, strerror(errno));
		return;
	}
	fb = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fb < 0 || fstat(fa, &a) < 0 || fstat(fb, &b) < 0) {
		snprintf(r->binary_msg, sizeof(r->binary_msg), "%.300s: cannot compare with this agent",
			 path);
		goto out;
	}
	if (!S_ISREG(a.st_mode) || !(a.st_mode & S_IXUSR)) {
		snprintf(r->binary_msg, sizeof(r->binary_msg), "%.300s is not an executable file", path);
		goto out;
	}
	key[0] = a.st_ino;
	key[1] = (uint64_t)a.st_size;
	key[2] = (uint64_t)a.st_mtim.tv_sec * 1000000000u + (uint64_t)a.st_mtim.tv_nsec;
	key[3] = b.st_ino;
	key[4] = (uint64_t)b.st_size;
	key[5] = (uint64_t)b.st_mtim.tv_sec * 1000000000u + (uint64_t)b.st_mtim.tv_nsec;
	if (memcmp(key, z->key, sizeof(key)) != 0) {
		z->same = a.st_size == b.st_size && same_file(fa, fb);
		memcpy(z->key, key, sizeof(key));
	}
	r->binary = z->same;
	snprintf(r->binary_msg, sizeof(r->binary_msg), "%.300s %s", path,
		 z->same ? "is this agent's binary"
			 : "differs from this agent's binary (not installed yet?)");
out:
	close(fa);
	if (fb >= 0)
		close(fb);
}

static void eval_conflist(struct ng_readyz *z, struct ng_ready *r)
{
	char active[4200], used[4200];
	struct ng_err err = {0};
	struct ng_config cfg;
	json_t *entry;

	r->conflist = false;
	if (ng_conffile_active(z->conf_dir, active, sizeof(active)) < 0) {
		snprintf(r->conflist_msg, sizeof(r->conflist_msg), "no network config in %.300s",
			 z->conf_dir);
		return;
	}
	entry = ng_conffile_entry(active, used, sizeof(used), &err);
	if (!entry) {
		snprintf(r->conflist_msg, sizeof(r->conflist_msg), "%.300s (the active config): %.300s",
			 active, err.msg);
		return;
	}
	if (ng_config_parse(entry, &cfg, &err) < 0) {
		snprintf(r->conflist_msg, sizeof(r->conflist_msg), "%.300s: our entry is refused: %.300s",
			 active, err.msg);
	} else {
		r->conflist = true;
		snprintf(r->conflist_msg, sizeof(r->conflist_msg),
			 "%.300s (the active config) holds our entry", active);
	}
	ng_config_free(&cfg);
	json_decref(entry);
}

void ng_readyz_eval(struct ng_readyz *z, struct ng_ready *r)
{
	eval_binary(z, r);
	eval_conflist(z, r);
}

bool ng_readyz_render(const struct ng_ready *r, FILE *out)
{
	fprintf(out, "%s binary: %s\n", r->binary ? "ok" : "FAIL", r->binary_msg);
	fprintf(out, "%s conflist: %s\n", r->conflist ? "ok" : "FAIL", r->conflist_msg);
	fprintf(out, "%s agent: %s\n", r->serving ? "ok" : "FAIL", r->serving_msg);
	if (r->has_policy)
		fprintf(out, "%s policy: %s\n", r->policy ? "ok" : "FAIL", r->policy_msg);
	return r->binary && r->conflist && r->serving && (!r->has_policy || r->policy);
}
