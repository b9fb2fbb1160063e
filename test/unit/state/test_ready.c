/* The agent's lock on stateDir: who holds it, from the kernel's lock table
 * (verify leaves the holder's own answer sockets out of its count, so the
 * holder must be the process that really holds the lock, never a pid a file
 * claims). */
#include "testutil.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "state/ready.h"
#include "state/record.h"

static void test_lock_lines(void **state)
{
	(void)state;
	/* fs/locks.c's layout: id, class, mode, access, pid, maj:min:ino (hex:hex:dec). */
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 4242 00:1a:5678 0 EOF\n", 0, 0x1a, 5678),
		4242);
	/* Another inode, another device, a shared lock, a POSIX lock, a waiter: none. */
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 4242 00:1a:5679 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 4242 08:01:5678 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  READ 4242 00:1a:5678 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("2: POSIX  ADVISORY  WRITE 4242 00:1a:5678 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("1: -> FLOCK  ADVISORY  WRITE 77 00:1a:5678 0 EOF\n", 0, 0x1a, 5678),
		0);
	/* A pid the reader's pid namespace cannot see is printed as 0. */
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 0 00:1a:5678 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(ng_locks_flock_holder("garbage", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE -5 00:1a:5678 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(
		ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 12 00:1a:5678x 0 EOF\n", 0, 0x1a, 5678), 0);
	assert_int_equal(ng_locks_flock_holder("1: FLOCK  ADVISORY  WRITE 12 00:1a 0 EOF\n", 0, 0x1a, 5678),
			 0);
	assert_int_equal(ng_locks_flock_holder("", 0, 0x1a, 5678), 0);
}

/* The real table: this process holding a state dir's lock is named; nobody
 * once it lets go, and nobody for a dir without a lock file. */
static void test_agent_pid(void **state)
{
	char dir[] = "/tmp/ng-test-ready-XXXXXX", path[256];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(ng_agent_pid(dir), 0);
	snprintf(path, sizeof(path), "%s/" NG_AGENT_LOCK, dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ng_agent_pid(dir), 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	/* ng_agent_serving asks with a second open file: our own lock
	 * blocks it, as an agent's does. */
	assert_int_equal(ng_agent_pid(dir), getpid());
	assert_int_equal(flock(fd, LOCK_UN), 0);
	assert_int_equal(ng_agent_pid(dir), 0);
	close(fd);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_lines),
		cmocka_unit_test(test_agent_pid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
