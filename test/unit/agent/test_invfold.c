/* The agent's fold of the plugin's invocation lines (agent/invfold.c):
 * torn and foreign lines, and the log's rotation. */
#include "testutil.h"

#include <fcntl.h>
#include <unistd.h>

#include "agent/invfold.h"

static void test_fold_lines_torn_and_foreign(void **state)
{
	struct ng_invfold f;
	struct ng_invtotals t;
	char longline[200];

	(void)state;
	ng_invfold_init(&f);
	memset(&t, 0, sizeof(t));
	ng_invfold_feed(&f, "ADD enforced 100\nDEL del", strlen("ADD enforced 100\nDEL del"), &t);
	assert_int_equal(t.nrows, 1);
	assert_int_equal(t.hist[0].count, 1);
	/* The torn tail completes with the next read. */
	ng_invfold_feed(&f, "eted 50\n", 8, &t);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(t.row[1].verb, "DEL");
	assert_string_equal(t.row[1].decision, "deleted");
	assert_int_equal(t.hist[1].sum_us, 50);
	/* A foreign line is counted as malformed, and so is an over-long one
	 * (resynchronised at its newline). */
	ng_invfold_feed(&f, "hello world\n", 12, &t);
	assert_int_equal(t.malformed, 1);
	memset(longline, 'x', sizeof(longline));
	longline[sizeof(longline) - 1] = '\n';
	ng_invfold_feed(&f, longline, sizeof(longline), &t);
	assert_int_equal(t.malformed, 2);
	ng_invfold_feed(&f, "ADD enforced 300\n", 17, &t);
	assert_int_equal(t.row[0].n, 2);
	assert_int_equal(t.hist[0].sum_us, 400);
}

static void test_fold_file_rotation(void **state)
{
	char dir[] = "/tmp/ng-fold-XXXXXX", path[256], old[300];
	struct ng_invfold f;
	struct ng_invtotals t;
	char line[NG_INV_LINE_MAX];
	int n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	ng_invfold_init(&f);
	memset(&t, 0, sizeof(t));
	n = ng_inv_format(line, sizeof(line), "ADD", "enforced", 1000);
	/* Enough lines to pass the rotation size. */
	for (size_t i = 0; i < NG_INVFOLD_ROTATE / (size_t)n + 2; i++)
		ng_inv_append(dir, line, (size_t)n);
	ng_invfold_run(&f, dir, 1000, &t);
	snprintf(path, sizeof(path), "%s/" NG_INV_LOG, dir);
	snprintf(old, sizeof(old), "%s.old", path);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(old, F_OK), 0);
	/* A plugin that opened before the rename still counts... */
	{
		int fd = open(old, O_WRONLY | O_APPEND);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, line, (size_t)n), n);
		close(fd);
	}
	/* ... and the new file is read after the grace period. */
	ng_inv_append(dir, line, (size_t)n);
	ng_invfold_run(&f, dir, 1500, &t);
	ng_invfold_run(&f, dir, 1000 + NG_INVFOLD_GRACE_MS, &t);
	assert_int_equal(t.row[0].n, NG_INVFOLD_ROTATE / (size_t)n + 2 + 2);
	assert_int_equal(t.malformed, 0);
	ng_invfold_close(&f);
	unlink(path);
	unlink(old);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_lines_torn_and_foreign),
		cmocka_unit_test(test_fold_file_rotation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
