#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int max_level = LOG_INFO;
static const char *ident = "ccxd";

void log_set_max_level(int level) {
	max_level = level;
}

int log_get_max_level(void) {
	return max_level;
}

void log_set_ident(const char *name) {
	ident = name;
}

/* journald sets JOURNAL_STREAM=DEV:INODE for the stream it hands us; only when
 * stderr is that very stream do priorities travel as "<N>" prefixes. */
static bool stderr_is_journal(void) {
	static int cached = -1;
	const char *e;
	unsigned long long dev, ino;
	struct stat st;

	if (cached >= 0)
		return cached;
	cached = 0;
	e = getenv("JOURNAL_STREAM");
	if (e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	    st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino)
		cached = 1;
	return cached;
}

static const char *level_name(int level) {
	switch (level) {
	case LOG_DEBUG: return "debug";
	case LOG_INFO: return "info";
	case LOG_NOTICE: return "notice";
	case LOG_WARNING: return "warning";
	default: return "error";
	}
}

int log_internal(int level, int r, const char *fmt, ...) {
	int saved_errno = errno;
	char msg[2048];
	va_list ap;

	if (level > max_level)
		return r;
	/* %m means the error we were handed, not whatever errno happens to be. */
	errno = r < 0 ? -r : saved_errno;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", ident, level_name(level), msg);
	errno = saved_errno;
	return r;
}
