#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_all(int fd, size_t max, char **ret, size_t *ret_len) {
	struct stat st;
	char *buf = NULL;
	size_t len = 0, alloc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((unsigned long long)st.st_size > max)
		return -EFBIG;
	/* Room for the size fstat() gave, the NUL, and a byte to see that it
	 * ended there; a file that grows meanwhile is read on, up to max. */
	alloc = (size_t)st.st_size + 2;
	for (;;) {
		ssize_t n;

		if (len + 1 == alloc || !buf) {
			char *b;
			if (buf)
				alloc = alloc > max / 2 ? max + 2 : alloc * 2;
			b = realloc(buf, alloc);
			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = read(fd, buf + len, alloc - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			free(buf);
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			return -EFBIG;
		}
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int regfile_read(const char *path, enum regfile_flags flags, size_t max, char **ret, size_t *len) {
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (flags & REGFILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	r = read_all(fd, max, ret, len);
	close(fd);
	return r;
}

int regfile_read_json(const char *path, size_t max, json_object **ret) {
	char *text;
	size_t len;
	int r = regfile_read(path, REGFILE_NOFOLLOW, max, &text, &len);

	if (r < 0)
		return r;
	*ret = json_tokener_parse(text);
	free(text);
	return *ret ? 0 : -EBADMSG;
}

const char *regfile_strerror(int error) {
	switch (error) {
	case -EINVAL:
		return "not a regular file";
	case -ELOOP:
		return "a symbolic link, which is not followed here";
	case -EFBIG:
		return "too large";
	default:
		return strerror(-error);
	}
}
