#include "install/install.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/cliarg.h"
#include "state/confdir.h"
#include "install/conflist.h"
#include "base/fsutil.h"
#include "install/installplan.h"
#include "install/help.h"
#include "install/say.h"
#include "install/watch.h"

#define BIN_NAME NG_PLUGIN_TYPE
#define BIN_MAX  ((size_t)64 * 1024 * 1024)

struct inst {
	const char *conf_dir, *bin_dir, *entry_path, *binary;
	bool watch, dry_run;
	long wait_s;
	int conf_fd, bin_fd;
	char *bin; /* the bytes of the binary to install */
	size_t bin_len;
	json_t *entry; /* the last entry a pass accepted */
	bool raced;    /* the last pass found a file changed under it */
};

#define RACE_RETRIES 5 /* immediate re-plans after another writer's change */

/* ---- steps ----------------------------------------------------------------- */

static int ensure_binary(struct inst *in, bool *changed, struct ng_err *err)
{
	struct ng_err ignore;
	struct stat st;
	char *have = NULL;
	size_t len = 0;
	int same;

	*changed = false;
	same = ng_read_at(in->bin_fd, BIN_NAME, BIN_MAX, &have, &len, &st, &ignore) == 0 &&
	       len == in->bin_len && memcmp(have, in->bin, len) == 0 && (st.st_mode & 07777) == 0755;
	free(have);
	if (same)
		return 0;
	*changed = true;
	if (in->dry_run)
		return 0;
	if (ng_write_at(in->bin_fd, BIN_NAME, in->bin, in->bin_len, 0755, NULL, err) < 0) {
		ng_err_prefix(err, "%s: ", in->bin_dir);
		return -1;
	}
	return 0;
}

/* The conf dir's config-named files and our side files, with their bytes.
 * A file that vanishes between readdir and open was being replaced: it is
 * skipped, and the watcher sees the event for its successor. */
static int list_dir(int dirfd, ng_dir_listing *out, struct ng_err *err)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!d) {
		if (fd >= 0)
			close(fd);
		return ng_fail(err, NG_E_INTERNAL, "cannot list the conf dir: %s", strerror(errno));
	}
	rewinddir(d); /* the dup shares the offset with dirfd */
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		struct stat st;
		char *text = NULL;
		size_t len = 0;
		enum ng_file_kind kind;

		if (!ng_is_conf_name(de->d_name) &&
		    strncmp(de->d_name, NG_BACKUP_PREFIX, strlen(NG_BACKUP_PREFIX)) != 0)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
			continue; /* gone, or a directory, which runtimes skip too */
		if (S_ISLNK(st.st_mode)) {
			kind = NG_FILE_SYMLINK;
		} else if (S_ISREG(st.st_mode)) {
			kind = NG_FILE_REGULAR;
			if (ng_read_at(dirfd, de->d_name, NG_CONF_MAX, &text, &len, &st, err) < 0) {
				if (err->code == NG_E_TRY_AGAIN)
					continue;
				rc = -1;
				break;
			}
		} else {
			kind = NG_FILE_OTHER;
		}
		if (ng_listing_add(out, de->d_name, kind, text, len, st.st_mode & 07777) < 0)
			rc = ng_fail(err, NG_E_INTERNAL, "out of memory");
		free(text);
	}
	if (rc == 0 && errno)
		rc = ng_fail(err, NG_E_INTERNAL, "cannot list the conf dir: %s", strerror(errno));
	closedir(d);
	if (rc < 0)
		ng_listing_free(out);
	return rc;
}

/* What the plan assumed `name` holds: the listed bytes, or nothing. */
static struct ng_expect expected(const ng_dir_listing *dir, const char *name)
{
	for (size_t i = 0; i < dir->n; i++)
		if (!strcmp(dir->v[i].name, name))
			return (struct ng_expect){
				.exists = true, .text = dir->v[i].text, .len = dir->v[i].len};
	return (struct ng_expect){.exists = false};
}

static int apply(struct inst *in, const struct ng_plan *plan, const ng_dir_listing *dir, struct ng_err *err)
{
	for (size_t i = 0; i < plan->acts.n; i++) {
		const struct ng_action *a = &plan->acts.v[i];
		struct ng_expect e = expected(dir, a->name);

		if (in->dry_run) {
			if (a->op == NG_ACT_WRITE &&
			    !strncmp(a->name, NG_BACKUP_PREFIX, strlen(NG_BACKUP_PREFIX)))
				printf("would save a copy of the original as %s/%s\n", in->conf_dir, a->name);
			else if (a->op == NG_ACT_WRITE)
				printf("would write %s/%s (mode %04o):\n%.*s", in->conf_dir, a->name, a->mode,
				       (int)a->len, a->text);
			else
				printf("would remove %s/%s\n", in->conf_dir, a->name);
			continue;
		}
		if ((a->op == NG_ACT_WRITE
			     ? ng_write_at(in->conf_fd, a->name, a->text, a->len, a->mode, &e, err)
			     : ng_remove_at(in->conf_fd, a->name, &e, err)) < 0) {
			in->raced = err->code == NG_E_TRY_AGAIN;
			ng_err_prefix(err, "%s: ", in->conf_dir);
			return -1;
		}
		ng_say("%s", a->what);
	}
	return 0;
}

static int load_entry(const struct inst *in, json_t **entry, struct ng_err *err)
{
	char *text;
	size_t len;
	int rc;

	if (ng_read_path(in->entry_path, NG_CONF_MAX, &text, &len, err) < 0)
		return -1;
	rc = ng_entry_parse(text, len, entry, err);
	free(text);
	if (rc < 0)
		ng_err_prefix(err, "%s: ", in->entry_path);
	return rc;
}

/* One pass of install. The plan comes first (it validates the entry), so a
 * refused entry writes nothing at all; then the binary, then the config:
 * CRI-O skips a config whose plugins are missing from the bin dir, and
 * containerd fails the pod. A watcher given a new entry file that is
 * refused keeps the entry it accepted before: a broken ConfigMap edit must
 * not leave the node unprotected when the primary next rewrites its file. */
static int reconcile(void *ctx, char *file, size_t file_len, struct ng_err *err)
{
	struct inst *in = ctx;
	ng_dir_listing dir;
	struct ng_plan plan;
	json_t *entry = NULL;
	bool bin_changed, entry_changed;
	int rc;

	if (load_entry(in, &entry, err) < 0) {
		if (!in->entry)
			return -1;
		ng_say_error("%s; keeping the entry accepted before", err->msg);
		entry = json_incref(in->entry);
	}
	if (list_dir(in->conf_fd, &dir, err) < 0) {
		json_decref(entry);
		return -1;
	}
	rc = ng_plan_install(&dir, entry, &plan, err);
	if (rc < 0 && plan.entry_refused && in->entry && !json_equal(entry, in->entry)) {
		ng_say_error("%s; keeping the entry accepted before", err->msg);
		json_decref(entry);
		entry = json_incref(in->entry);
		rc = ng_plan_install(&dir, entry, &plan, err);
	}
	if (rc < 0) {
		ng_listing_free(&dir);
		json_decref(entry);
		return -1;
	}
	entry_changed = in->entry && !json_equal(entry, in->entry);
	if (entry_changed)
		ng_say("the plugin entry changed (%s)", in->entry_path);
	json_decref(in->entry);
	in->entry = entry;
	if (ensure_binary(in, &bin_changed, err) < 0) {
		ng_listing_free(&dir);
		ng_plan_free(&plan);
		return -1;
	}
	if (bin_changed)
		ng_say("%s %s/%s", in->dry_run ? "would install" : "installed", in->bin_dir, BIN_NAME);
	rc = apply(in, &plan, &dir, err);
	ng_listing_free(&dir);
	snprintf(file, file_len, "%s", plan.active);
	if (rc == 0 && in->dry_run)
		ng_say("dry run: %s/%s would be the active network config; nothing was changed", in->conf_dir,
		       plan.active);
	else if (rc == 0 && !in->watch)
		ng_say("%s/%s is the active network config and holds our entry%s", in->conf_dir, plan.active,
		       plan.acts.n ? "" : " (already up to date)");
	/* What the fight detector counts: rewrites that someone else's change
	 * made necessary (not the ones a new entry of ours made). */
	if (rc == 0)
		rc = plan.acts.n > 0 && !entry_changed;
	ng_plan_free(&plan);
	return rc;
}

/* ---- command line ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, bool install, struct inst *in)
{
	static const struct option opts[] = {
		{"conf-dir", required_argument, NULL, 'c'},
		{"bin-dir", required_argument, NULL, 'b'},
		{"entry", required_argument, NULL, 'e'},
		{"binary", required_argument, NULL, 'x'},
		{"watch", no_argument, NULL, 'w'},
		{"wait", required_argument, NULL, 't'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = install ? "install" : "uninstall";
	int c;

	in->conf_dir = NG_DEFAULT_CONF_DIR;
	in->bin_dir = NG_DEFAULT_BIN_DIR;
	in->binary = "/proc/self/exe";
	optind = 0; /* glibc: 0 also resets getopt's internal state between calls */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {

		if (!install && (c == 'e' || c == 'x' || c == 'w' || c == 't'))
			c = '?';
		switch (c) {
		case 'c': in->conf_dir = optarg; break;
		case 'b': in->bin_dir = optarg; break;
		case 'e': in->entry_path = optarg; break;
		case 'x': in->binary = optarg; break;
		case 'w': in->watch = true; break;
		case 'n': in->dry_run = true; break;
		case 't':
			if (!ng_arg_long(cmd, "wait", optarg, 0, 86400, &in->wait_s))
				return 2;
			break;
		case 'h': (install ? ng_install_help : ng_uninstall_help)(stdout); return 0;
		default:
			fprintf(stderr, "boxxkite-netguard %s: unknown or incomplete option \"%s\"\n\n", cmd,
				argv[optind - 1]);
			(install ? ng_install_help : ng_uninstall_help)(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "boxxkite-netguard %s: unexpected argument \"%s\"\n", cmd, argv[optind]);
		return 2;
	}
	if (install && !in->entry_path) {
		fprintf(stderr,
			"boxxkite-netguard install: --entry FILE is required (the plugin entry, JSON)\n");
		return 2;
	}
	if (in->watch && in->dry_run) {
		fprintf(stderr, "boxxkite-netguard install: --watch and --dry-run do not go together\n");
		return 2;
	}
	return -1;
}

/* The command's last line: in the DaemonSet's log it reads like the others. */
static int fail(const char *cmd, const struct ng_err *err)
{
	ng_say_error("%s failed: %s", cmd, err->msg);
	return 1;
}

static void inst_close(struct inst *in)
{
	if (in->conf_fd >= 0)
		close(in->conf_fd);
	if (in->bin_fd >= 0)
		close(in->bin_fd);
	free(in->bin);
	json_decref(in->entry);
}

int ng_install_main(int argc, char **argv)
{
	struct inst in = {.conf_fd = -1, .bin_fd = -1};
	struct ng_err err = {0};
	char file[NG_FILENAME_MAX + 1];
	int rc = parse_args(argc, argv, true, &in);
	time_t deadline;

	if (rc >= 0)
		return rc;
	if ((in.conf_fd = ng_dir_open(in.conf_dir, &err)) < 0 ||
	    (in.bin_fd = ng_dir_open(in.bin_dir, &err)) < 0 ||
	    ng_read_path(in.binary, BIN_MAX, &in.bin, &in.bin_len, &err) < 0) {
		inst_close(&in);
		return fail("install", &err);
	}
	/* Checked before anything is written, also under --watch: an entry
	 * that does not load now has nothing to fall back to. */
	if (load_entry(&in, &in.entry, &err) < 0) {
		inst_close(&in);
		return fail("install", &err);
	}
	if (in.watch) {
		char entry_dir[4096], *slash;

		snprintf(entry_dir, sizeof(entry_dir), "%s", in.entry_path);
		slash = strrchr(entry_dir, '/');
		if (slash)
			*(slash == entry_dir ? slash + 1 : slash) = '\0';
		rc = ng_watch_run(in.conf_fd, in.conf_dir, slash ? entry_dir : ".", reconcile, &in);
		inst_close(&in);
		return rc;
	}
	deadline = time(NULL) + in.wait_s;
	for (int races = 0;;) {
		static bool said;

		in.raced = false;
		rc = reconcile(&in, file, sizeof(file), &err);
		if (rc >= 0 || err.code != NG_E_TRY_AGAIN)
			break;
		/* Another writer changed a file between our read and our rename:
		 * read it again at once, from its new bytes. */
		if (in.raced && races++ < RACE_RETRIES) {
			ng_say("%s; planning again", err.msg);
			continue;
		}
		if (in.raced || time(NULL) >= deadline)
			break;
		if (!said)
			ng_say("waiting up to %lds for a network config in %s", in.wait_s, in.conf_dir);
		said = true;
		sleep(1);
	}
	inst_close(&in);
	if (rc < 0) {
		if (err.code == NG_E_TRY_AGAIN)
			ng_err_prefix(&err, "%s: ", in.conf_dir);
		return fail("install", &err);
	}
	return 0;
}

int ng_uninstall_main(int argc, char **argv)
{
	struct inst in = {.conf_fd = -1, .bin_fd = -1};
	struct ng_err err = {0};
	ng_dir_listing dir;
	struct ng_plan plan;
	struct stat st;
	int rc = parse_args(argc, argv, false, &in);

	if (rc >= 0)
		return rc;
	if ((in.conf_fd = ng_dir_open(in.conf_dir, &err)) < 0 ||
	    (in.bin_fd = ng_dir_open(in.bin_dir, &err)) < 0) {
		inst_close(&in);
		return fail("uninstall", &err);
	}
	/* Config first: while a conflist still names the plugin, its binary
	 * must stay, or pods fail to start. A file another writer changed
	 * under us is read and planned again. */
	for (int races = 0;; races++) {
		in.raced = false;
		if (list_dir(in.conf_fd, &dir, &err) < 0) {
			inst_close(&in);
			return fail("uninstall", &err);
		}
		rc = ng_plan_uninstall(&dir, &plan, &err);
		if (rc == 0 && apply(&in, &plan, &dir, &err) < 0) {
			ng_plan_free(&plan);
			rc = -1;
		}
		ng_listing_free(&dir);
		if (rc == 0)
			break;
		if (!in.raced || races >= RACE_RETRIES) {
			inst_close(&in);
			return fail("uninstall", &err);
		}
		ng_say("%s; planning again", err.msg);
	}
	if (fstatat(in.bin_fd, BIN_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (in.dry_run)
			printf("would remove %s/%s\n", in.bin_dir, BIN_NAME);
		else if (ng_remove_at(in.bin_fd, BIN_NAME, NULL, &err) < 0)
			rc = -1;
		else
			ng_say("removed %s/%s", in.bin_dir, BIN_NAME);
	} else if (plan.acts.n == 0) {
		ng_say("nothing to remove: no entry of ours in %s, no %s/%s", in.conf_dir, in.bin_dir,
		       BIN_NAME);
	}
	ng_plan_free(&plan);
	inst_close(&in);
	return rc < 0 ? fail("uninstall", &err) : 0;
}
