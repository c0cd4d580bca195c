#include "atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* The rename is an entry of path's directory: it reaches the disk with the
 * directory's own fsync, without which a crash may bring back the old file
 * (or none) over data that was synced. */
static int sync_directory(const char *path) {
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, r = 0;

	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int atomicfile_write(const char *path, const char *text, mode_t mode, bool durable) {
	size_t len = strlen(text), done = 0;
	char *tmp;
	int fd, r = 0;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	/* mkostemp makes it 0600 whatever the umask. */
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && durable && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	else if (durable)
		r = sync_directory(path);
	free(tmp);
	return r;
}
