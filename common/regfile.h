/* Files read by name where someone else may have put something in their
 * place: a configuration file, a record in a directory that another user
 * owns. Only a regular file is read. The open never blocks (a FIFO would
 * wait for a writer), never makes a terminal ccxd's, and, where asked,
 * does not follow a symbolic link (root reading what user ccxd can
 * replace). */
#pragma once

#include <stddef.h>
#include <json-c/json.h>

enum regfile_flags {
	REGFILE_NOFOLLOW = 1 << 0,   /* a symbolic link is refused, not followed */
};

/* Reads the whole of path, at most max bytes, into a new NUL-terminated
 * buffer (*ret, freed by the caller; *len without the NUL). Returns 0, or
 * -errno: -EISDIR for a directory, -EINVAL for anything else that is
 * not a regular file (a FIFO, a device, a socket), -ELOOP when it is a link and REGFILE_NOFOLLOW was given,
 * -EFBIG when it is larger than max. */
int regfile_read(const char *path, enum regfile_flags flags, size_t max, char **ret, size_t *len);

/* What regfile_read()'s error means, for people. */
const char *regfile_strerror(int error);

/* The JSON object in path, read as regfile_read() with REGFILE_NOFOLLOW
 * reads it: ccxd's own state (state_dir), which root must not be led by a
 * link or a FIFO to read from elsewhere, nor made to parse without end.
 * Returns 0 and *ret, or -errno as regfile_read(), -EBADMSG when it is not
 * JSON. */
int regfile_read_json(const char *path, size_t max, json_object **ret);
