/* The agent's local socket. See unixsock.h. */
#include "kernel/unixsock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int address(const char *path, struct sockaddr_un *a, struct ng_err *err)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return ng_fail(err, NG_E_INTERNAL, "%s: longer than a unix socket path may be (%zu bytes)",
			       path, sizeof(a->sun_path) - 1);
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

int ng_unix_listen(const char *path, struct ng_err *err)
{
	struct sockaddr_un a;
	struct stat st;
	int fd;

	if (address(path, &a, err) < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return ng_fail(err, NG_E_INTERNAL, "%s: exists and is not a socket", path);
		unlink(path); /* a stale one: the agent lock says no other agent serves */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ng_fail(err, NG_E_INTERNAL, "socket: %s", strerror(errno));
	/* The file is made with the umask's mode (connect needs write
	 * permission), then narrowed to root before anyone is accepted. */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		ng_fail(err, NG_E_INTERNAL, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int ng_unix_accept(int listen_fd, uid_t *peer_uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);
		return -1;
	}
	*peer_uid = cred.uid;
	return fd;
}

int ng_unix_connect(const char *path, bool *none, struct ng_err *err)
{
	struct sockaddr_un a;
	int fd;

	*none = false;
	if (address(path, &a, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ng_fail(err, NG_E_INTERNAL, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		*none = errno == ENOENT || errno == ECONNREFUSED;
		ng_fail(err, NG_E_INTERNAL, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
