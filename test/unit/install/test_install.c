/* The installer's file operations (fsutil.c) and its command line, in a
 * temporary directory (no root needed): atomic replacement, modes, no
 * temp file left behind, symlinks never followed, unsafe directories
 * refused, and a refused entry writing nothing. e2e/install.sh runs the
 * real binary, --watch included. */
#include "testutil.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "install/install.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/ng-install-test.XXXXXX");
	if (!mkdtemp(top))
		return -1;
	chmod(top, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", top, name);
}

static void put(const char *name, const char *text)
{
	char p[256];
	FILE *f;

	path_of(p, sizeof(p), name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0; /* dotfiles too */
	closedir(d);
	return n;
}

/* dir/name holds exactly `want`. */
static void assert_file_holds(const char *dir, const char *name, const char *want)
{
	struct ng_err err = {0};
	char path[512], *text;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(ng_read_path(path, 4096, &text, &len, &err), 0);
	assert_string_equal(text, want);
	free(text);
}

static void test_write_replaces_atomically(void **state)
{
	(void)state;
	struct ng_err err = {0};
	struct stat a, b;
	char p[256], *text;
	size_t len;
	int dfd = ng_dir_open(top, &err);

	assert_true(dfd >= 0);
	put("10-x.conflist", "old");
	path_of(p, sizeof(p), "10-x.conflist");
	assert_int_equal(stat(p, &a), 0);
	assert_int_equal(ng_write_at(dfd, "10-x.conflist", "new\n", 4, 0640, NULL, &err), 0);
	assert_int_equal(stat(p, &b), 0);
	/* A new inode renamed over the old one, never the old one rewritten. */
	assert_true(a.st_ino != b.st_ino);
	assert_int_equal(b.st_mode & 07777, 0640);
	assert_int_equal(ng_read_at(dfd, "10-x.conflist", 100, &text, &len, NULL, &err), 0);
	assert_string_equal(text, "new\n");
	free(text);
	/* The umask does not decide modes. */
	umask(077);
	assert_int_equal(ng_write_at(dfd, "bin", "x", 1, 0755, NULL, &err), 0);
	path_of(p, sizeof(p), "bin");
	assert_int_equal(stat(p, &b), 0);
	assert_int_equal(b.st_mode & 07777, 0755);
	umask(022);
	assert_int_equal(count_entries(top), 2); /* no temp file left */
	assert_int_equal(ng_remove_at(dfd, "bin", NULL, &err), 0);
	assert_int_equal(ng_remove_at(dfd, "bin", NULL, &err), 0); /* already gone: fine */
	close(dfd);
}

/* The rename happens only if the file still holds what the plan was made
 * from: a primary CNI's rewrite in between is never overwritten. */
static void test_write_only_over_what_was_planned(void **state)
{
	(void)state;
	struct ng_err err = {0};
	char *text;
	size_t len;
	int dfd = ng_dir_open(top, &err);
	struct ng_expect old = {.exists = true, .text = "old", .len = 3}, none = {.exists = false};

	assert_true(dfd >= 0);
	put("10-p.conflist", "old");
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours", 4, 0644, &old, &err), 0);
	/* Rewritten by someone else since: refused, code 11, theirs kept. */
	put("10-p.conflist", "theirs");
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours2", 5, 0644, &old, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_contains(err.msg, "changed while it was being rewritten");
	assert_int_equal(ng_read_at(dfd, "10-p.conflist", 100, &text, &len, NULL, &err), 0);
	assert_string_equal(text, "theirs");
	free(text);
	/* Same length, other bytes: refused too. */
	put("10-p.conflist", "odd");
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours", 4, 0644, &old, &err), -1);
	/* Expected absent, now present; expected present, now gone. */
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours", 4, 0644, &none, &err), -1);
	assert_int_equal(ng_remove_at(dfd, "10-p.conflist", NULL, &err), 0);
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours", 4, 0644, &old, &err), -1);
	assert_int_equal(ng_write_at(dfd, "10-p.conflist", "ours", 4, 0644, &none, &err), 0);
	/* Removal too: only what was planned from ("ours"), not "old". */
	assert_int_equal(ng_remove_at(dfd, "10-p.conflist", &old, &err), -1);
	assert_int_equal(err.code, NG_E_TRY_AGAIN);
	assert_int_equal(ng_read_at(dfd, "10-p.conflist", 100, &text, &len, NULL, &err), 0);
	assert_string_equal(text, "ours");
	free(text);
	struct ng_expect ours = {.exists = true, .text = "ours", .len = 4};
	assert_int_equal(ng_remove_at(dfd, "10-p.conflist", &ours, &err), 0);
	assert_int_equal(count_entries(top), 0); /* no temp file left */
	close(dfd);
}

static void test_symlinks_never_followed(void **state)
{
	(void)state;
	struct ng_err err = {0};
	char p[256], target[256], *text;
	size_t len;
	int dfd = ng_dir_open(top, &err);

	mkdir(strcat(strcpy(target, top), "/outside"), 0755);
	put("outside/secret", "keep");
	path_of(p, sizeof(p), "10-link.conflist");
	assert_int_equal(symlink("outside/secret", p), 0);
	/* Reading through it is refused... */
	assert_int_equal(ng_read_at(dfd, "10-link.conflist", 100, &text, &len, NULL, &err), -1);
	assert_contains(err.msg, "symlink");
	/* ...and writing replaces the link, not what it points at. */
	assert_int_equal(ng_write_at(dfd, "10-link.conflist", "mine", 4, 0644, NULL, &err), 0);
	assert_int_equal(ng_read_path(strcat(target, "/secret"), 100, &text, &len, &err), 0);
	assert_string_equal(text, "keep");
	free(text);
	close(dfd);

	/* A symlinked directory is refused by name. */
	path_of(p, sizeof(p), "dirlink");
	assert_int_equal(symlink("outside", p), 0);
	assert_int_equal(ng_dir_open(p, &err), -1);
	assert_contains(err.msg, "is a symlink");
}

static void test_unsafe_files_and_dirs(void **state)
{
	(void)state;
	struct ng_err err = {0};
	char p[256], *text;
	size_t len;
	int dfd = ng_dir_open(top, &err);

	/* A FIFO under a config name must not hang the installer. */
	path_of(p, sizeof(p), "10-fifo.conf");
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(ng_read_at(dfd, "10-fifo.conf", 100, &text, &len, NULL, &err), -1);
	assert_contains(err.msg, "not a regular file");
	put("big.json", "0123456789");
	assert_int_equal(ng_read_at(dfd, "big.json", 9, &text, &len, NULL, &err), -1);
	assert_contains(err.msg, "larger than 9 bytes");
	assert_int_equal(ng_read_at(dfd, "big.json", 10, &text, &len, NULL, &err), 0);
	free(text);
	close(dfd);

	/* A directory everyone can write to is refused. */
	path_of(p, sizeof(p), "open");
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(ng_dir_open(p, &err), -1);
	assert_contains(err.msg, "writable by every user");
	path_of(p, sizeof(p), "missing");
	assert_int_equal(ng_dir_open(p, &err), -1);
}

/* Runs a subcommand in-process; returns its exit status. */
static int run(int (*fn)(int, char **), const char *a0, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	const char *s;
	int rc;
	FILE *saved = stderr;

	argv[argc++] = (char *)a0;
	va_start(ap, a0);
	while ((s = va_arg(ap, const char *)) && argc < 15)
		argv[argc++] = (char *)s;
	va_end(ap);
	argv[argc] = NULL;
	stderr = fopen(getenv("NG_TEST_STDERR") ? "/dev/stderr" : "/dev/null", "w");
	rc = fn(argc, argv);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void test_cli(void **state)
{
	(void)state;
	char conf[256], bin[256], entry[256], binary[256];
	const char *list = "{\"cniVersion\":\"0.3.1\",\"name\":\"k\",\"plugins\":[{\"type\":\"ptp\"}]}\n";

	path_of(conf, sizeof(conf), "net.d");
	path_of(bin, sizeof(bin), "bin");
	path_of(entry, sizeof(entry), "entry.json");
	path_of(binary, sizeof(binary), "the-binary");
	mkdir(conf, 0755);
	mkdir(bin, 0755);
	put("net.d/10-k.conflist", list);
	put("the-binary", "#!/bin/false\n");

	assert_int_equal(run(ng_install_main, "install", "--conf-dir", conf, NULL), 2);
	assert_int_equal(run(ng_install_main, "install", "--entry", entry, "--wait", "soon", NULL), 2);
	assert_int_equal(run(ng_install_main, "install", "--entry", entry, "--bogus", NULL), 2);
	assert_int_equal(run(ng_install_main, "install", "--entry", entry, "--watch", "--dry-run", NULL), 2);
	assert_int_equal(run(ng_uninstall_main, "uninstall", "--entry", entry, NULL), 2);

	/* A refused entry: exit 1 and nothing written anywhere. */
	put("entry.json", "{\"type\":\"boxxkite-netguard\",\"enforce\":{\"namespaces\":[\"s\"]},"
			  "\"egress\":{\"allow\":[\"0.0.0.0/0:443\"]}}");
	assert_int_equal(run(ng_install_main, "install", "--entry", entry, "--conf-dir", conf, "--bin-dir",
			     bin, "--binary", binary, NULL),
			 1);
	assert_int_equal(count_entries(bin), 0);
	assert_file_holds(conf, "10-k.conflist", list);
	assert_int_equal(count_entries(conf), 1);

	/* A good one: installed, then uninstalled back to the original. */
	put("entry.json", "{\"type\":\"boxxkite-netguard\",\"enforce\":{\"namespaces\":[\"s\"]}}");
	assert_int_equal(run(ng_install_main, "install", "--entry", entry, "--conf-dir", conf, "--bin-dir",
			     bin, "--binary", binary, NULL),
			 0);
	assert_int_equal(count_entries(bin), 1);
	assert_int_equal(run(ng_uninstall_main, "uninstall", "--conf-dir", conf, "--bin-dir", bin, NULL), 0);
	assert_int_equal(count_entries(bin), 0);
	assert_file_holds(conf, "10-k.conflist", list);
	assert_int_equal(count_entries(conf), 1);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_replaces_atomically, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_only_over_what_was_planned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks_never_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsafe_files_and_dirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli, setup, teardown),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
