/* The control socket's listening end: systemd's (ccxd.socket), or one ccxd
 * binds itself, never stealing the path from a ccxd that answers on it. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "log.h"

static int mkdir_parents(const char *path) {
	char dir[PATH_MAX];

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* A socket file nobody answers on is left over from a crash: remove it. One
 * that answers belongs to a running ccxd, which we must not steal from. */
static int clear_stale_socket(const struct sockaddr_un *sa) {
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		r = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		r = unlink(sa->sun_path) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int control_listen(const char *path, bool *activated) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r;

	r = sd_listen_fds(1);
	if (r == 1 && sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) > 0) {
		*activated = true;
		fd = SD_LISTEN_FDS_START;
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			return -errno;
		return fd;
	}
	if (r > 0)
		log_warning("Ignoring %d passed file descriptors that are not one listening Unix stream socket", r);
	*activated = false;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	r = mkdir_parents(path);
	if (r < 0)
		return r;
	r = clear_stale_socket(&sa);
	if (r < 0 && r != -ENOENT)
		return r;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* The file bind() makes takes its mode from the socket, less the umask:
	 * 0660 from the start, never open to all, and no chmod() by name,
	 * which in a directory another user owns could be sent through a link
	 * to any file. */
	mode_t old = umask(0117);
	r = fchmod(fd, 0660);
	if (r == 0)
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
