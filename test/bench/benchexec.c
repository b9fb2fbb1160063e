/* benchexec: times one program run the way a container runtime pays for it.
 *
 *   benchexec [-n NETNS_PATH] [-i STDIN_FILE] [-o STDOUT_FILE] -- PROGRAM ARGS...
 *
 * Prints one line on stdout:
 *   wall_ns user_us sys_us maxrss_kb minflt status
 * wall_ns runs from just before fork() to the return of wait4(): process
 * creation, exec, dynamic loading, the program's work, exit and reaping.
 * user/sys/maxrss/minflt (minor page faults) come from wait4()'s rusage
 * (the child and any children it waited for); status is the exit code, or
 * 128+signal. -n enters the network namespace in the child before exec (for
 * tools such as nft that act where they run); the environment is passed
 * through unchanged. Files are opened before the clock starts. Part of
 * `make bench` (test/bench/).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: benchexec [-n NETNS] [-i STDIN] [-o STDOUT] -- PROGRAM ARGS...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *netns = NULL, *in = "/dev/null", *out = "/dev/null";
	int opt, infd, outfd, nsfd = -1, status;
	struct timespec t0, t1;
	struct rusage ru;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+n:i:o:")) != -1) {
		switch (opt) {
		case 'n': netns = optarg; break;
		case 'i': in = optarg; break;
		case 'o': out = optarg; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	infd = open(in, O_RDONLY | O_CLOEXEC);
	outfd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (infd < 0 || outfd < 0) {
		perror("benchexec: open");
		return 2;
	}
	if (netns && (nsfd = open(netns, O_RDONLY | O_CLOEXEC)) < 0) {
		perror("benchexec: open netns");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0) {
		perror("benchexec: fork");
		return 2;
	}
	if (pid == 0) {
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0)
			_exit(126);
		if (dup2(infd, 0) < 0 || dup2(outfd, 1) < 0)
			_exit(126);
		execv(argv[optind], argv + optind);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("benchexec: wait4");
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%lld %ld %ld %ld %ld %d\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
	       (long)ru.ru_utime.tv_sec * 1000000L + (long)ru.ru_utime.tv_usec,
	       (long)ru.ru_stime.tv_sec * 1000000L + (long)ru.ru_stime.tv_usec, ru.ru_maxrss, ru.ru_minflt,
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
