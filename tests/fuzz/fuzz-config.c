/* The config parser and the rule matcher. The input is a config file; the
 * rules it yields are then matched against identities taken from its own
 * bytes, so that globs meet names they were written for. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>

#include "config-file.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void match_all(const struct config *c, const uint8_t *data, size_t size) {
	/* Three NUL-terminated strings from the input's tail: comm, exe, cmdline. */
	char buf[3][256];
	size_t off = size > 600 ? size - 600 : 0;

	for (int i = 0; i < 3; i++) {
		size_t n = size - off < 200 ? size - off : 200;
		memcpy(buf[i], data + off, n);
		buf[i][n] = '\0';
		off += n;
	}
	buf[0][15] = '\0';   /* comm is at most 15 bytes */
	for (int mask = 0; mask < 4; mask++) {
		struct rule_identity id = {
			.comm = buf[0],
			.exe = mask & 1 ? buf[1] : NULL,
			.cmdline = mask & 2 ? buf[2] : NULL,
		};
		unsigned need;
		const struct rule *r = rules_match(c->rules, c->n_rules, &id, &need);

		/* The contract: an answer, or a list of what to read, never both. */
		if (r && need)
			abort();
		if (mask == 3 && need)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct config *c = NULL;
	char **errors = NULL, path[64];
	int fd, r;

	/* config_load() reads a path; a memfd gives it one without touching the disk. */
	fd = memfd_create("fuzz-config", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = config_load(path, &c, &errors);
	close(fd);
	if (r == 0) {
		if (!c || errors)
			abort();
		match_all(c, data, size);
		config_free(c);
	} else {
		if (c)
			abort();
		/* A file that parses wrongly says where, every time. */
		if (r == -EINVAL && (!errors || !errors[0]))
			abort();
		config_errors_free(errors);
	}
	return 0;
}
