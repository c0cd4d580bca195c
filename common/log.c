#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

#define LOG_MESSAGE_MAX 2048
/* A message with its fields; journald takes far larger datagrams. */
#define LOG_DATAGRAM_MAX 8192
/* journald's limit on field names. */
#define LOG_FIELD_NAME_MAX 64

enum journal_use {
	JOURNAL_UNDECIDED,
	JOURNAL_NO,
	JOURNAL_YES,
};

static int max_level = LOG_INFO;
static const char *ident = "ccxd";
static enum journal_use journal_use = JOURNAL_UNDECIDED;
static int journal_fd = -1;
static char journal_path[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
static uint64_t dropped, dropped_unreported;

void log_set_max_level(int level) {
	max_level = level;
}

int log_get_max_level(void) {
	return max_level;
}

void log_set_ident(const char *name) {
	ident = name;
}

uint64_t log_dropped(void) {
	return dropped;
}

/* journald sets JOURNAL_STREAM=DEV:INODE for the stream it hands us; only when
 * stderr is that very stream are we running under it (a child that inherited
 * the variable but writes elsewhere is not). */
static bool stderr_is_journal(void) {
	static int cached = -1;
	const char *e;
	unsigned long long dev, ino;
	struct stat st;

	if (cached >= 0)
		return cached;
	e = getenv("JOURNAL_STREAM");
	cached = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
		 st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
	return cached;
}

static int journal_connect(void) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (journal_fd >= 0) {
		close(journal_fd);
		journal_fd = -1;
	}
	/* Non-blocking: a full journal socket must cost a dropped message, not
	 * a stalled event loop. */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, journal_path, sizeof(sa.sun_path));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	journal_fd = fd;
	return 0;
}

int log_open_journal(const char *path) {
	int r;

	if (strlen(path) >= sizeof(journal_path))
		return -ENAMETOOLONG;
	strcpy(journal_path, path);
	r = journal_connect();
	journal_use = r < 0 ? JOURNAL_NO : JOURNAL_YES;
	return r;
}

void log_close(void) {
	if (journal_fd >= 0)
		close(journal_fd);
	journal_fd = -1;
	journal_use = JOURNAL_UNDECIDED;
}

void log_to_stderr(void) {
	log_close();
	journal_use = JOURNAL_NO;
}

static bool use_journal(void) {
	if (journal_use == JOURNAL_UNDECIDED) {
		journal_use = JOURNAL_NO;
		if (stderr_is_journal())
			log_open_journal(LOG_JOURNAL_SOCKET);
	}
	return journal_use == JOURNAL_YES;
}

static const char *const level_names[] = {
	[LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice",
	[LOG_INFO] = "info",
	[LOG_DEBUG] = "debug",
};

/* Every level more urgent than a warning is an error. */
static const char *level_name(int level) {
	const char *name = NAME_OF(level_names, level);

	return name ? name : "error";
}

/* ---- the native protocol ---------------------------------------------- */

static bool field_name_valid(const char *name, size_t len) {
	if (len == 0 || len > LOG_FIELD_NAME_MAX || !(name[0] >= 'A' && name[0] <= 'Z'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return false;
	return true;
}

struct buffer {
	char *data;
	size_t size, len;
	bool overflow;
};

static void put(struct buffer *b, const void *data, size_t n) {
	if (b->overflow || n > b->size - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
}

/* NAME=value\n, or for a value with a newline in it NAME\n, its length as
 * 64-bit little endian, the value and \n. */
static void put_field(struct buffer *b, const char *name, size_t name_len, const char *value) {
	size_t len = strlen(value);

	put(b, name, name_len);
	if (!memchr(value, '\n', len)) {
		put(b, "=", 1);
		put(b, value, len);
	} else {
		unsigned char le[8];
		uint64_t v = len;
		for (size_t i = 0; i < sizeof(le); i++, v >>= 8)
			le[i] = (unsigned char)(v & 0xff);
		put(b, "\n", 1);
		put(b, le, sizeof(le));
		put(b, value, len);
	}
	put(b, "\n", 1);
}

ssize_t log_journal_format(char *buf, size_t size, int level, const char *name, int errnum,
			   const char *const *fields, const char *message) {
	struct buffer b = { buf, size, 0, false };
	char number[16];

	snprintf(number, sizeof(number), "%d", level);
	put_field(&b, "PRIORITY", 8, number);
	put_field(&b, "SYSLOG_IDENTIFIER", 17, name);
	if (errnum > 0) {
		snprintf(number, sizeof(number), "%d", errnum);
		put_field(&b, "ERRNO", 5, number);
	}
	for (const char *const *f = fields; f && *f; f++) {
		const char *eq = strchr(*f, '=');
		if (eq && field_name_valid(*f, (size_t)(eq - *f)))
			put_field(&b, *f, (size_t)(eq - *f), eq + 1);
	}
	put_field(&b, "MESSAGE", 7, message);
	return b.overflow ? -ENOBUFS : (ssize_t)b.len;
}

/* ---- writing ------------------------------------------------------------ */

/* 0 when sent or dropped for want of room; -errno when the journal cannot
 * be reached at all, and the message should go to stderr instead. */
static int journal_send(const char *data, size_t len) {
	for (int attempt = 0; attempt < 2; attempt++) {
		if (journal_fd >= 0 && send(journal_fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return 0;
		if (journal_fd >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			dropped++;
			dropped_unreported++;
			return 0;
		}
		if (journal_fd >= 0 && errno != ECONNREFUSED && errno != ENOTCONN)
			return -errno;
		/* journald restarted with a fresh socket: connect once more. */
		if (attempt == 0 && journal_connect() < 0)
			return -ECONNREFUSED;
	}
	return -ECONNREFUSED;
}

static void report_drops(void) {
	char msg[128], buf[512];
	ssize_t n;

	snprintf(msg, sizeof(msg), "Dropped %llu log messages: the journal did not keep up",
		 (unsigned long long)dropped_unreported);
	n = log_journal_format(buf, sizeof(buf), LOG_WARNING, ident, 0, NULL, msg);
	if (n > 0 && journal_fd >= 0 && send(journal_fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		dropped_unreported = 0;
}

static void log_write(int level, int r, const char *const *fields, const char *msg) {
	if (use_journal()) {
		char buf[LOG_DATAGRAM_MAX];
		ssize_t n = log_journal_format(buf, sizeof(buf), level, ident, r < 0 ? -r : 0, fields, msg);

		if (n > 0 && journal_send(buf, (size_t)n) == 0) {
			if (dropped_unreported > 0 && journal_fd >= 0)
				report_drops();
			return;
		}
	}
	if (stderr_is_journal())
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", ident, level_name(level), msg);
}

static int log_va(int level, int r, const char *const *fields, const char *fmt, va_list ap) {
	int saved_errno = errno;
	char msg[LOG_MESSAGE_MAX];

	if (level > max_level)
		return r;
	/* %m means the error we were handed, not whatever errno happens to be. */
	errno = r < 0 ? -r : saved_errno;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_write(level, r, fields, msg);
	errno = saved_errno;
	return r;
}

int log_internal(int level, int r, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	r = log_va(level, r, NULL, fmt, ap);
	va_end(ap);
	return r;
}

int log_fields(int level, int r, const char *const *fields, const char *fmt, ...) {
	va_list ap;

	va_start(ap, fmt);
	r = log_va(level, r, fields, fmt, ap);
	va_end(ap);
	return r;
}

int log_decision(int level, const struct log_decision *d, const char *fmt, ...) {
	char pid[32], comm[64], ccx[256], group[128], rule[256], decision[64];
	const char *fields[7];
	size_t n = 0;
	va_list ap;
	int r;

	if (level > max_level)
		return 0;
	if (d->pid > 0 && snprintf(pid, sizeof(pid), "CCXD_PID=%d", (int)d->pid) > 0)
		fields[n++] = pid;
	if (d->comm && snprintf(comm, sizeof(comm), "CCXD_COMM=%s", d->comm) > 0)
		fields[n++] = comm;
	if (d->ccx && snprintf(ccx, sizeof(ccx), "CCXD_CCX=%s", d->ccx) > 0)
		fields[n++] = ccx;
	if (d->group && snprintf(group, sizeof(group), "CCXD_GROUP=%s", d->group) > 0)
		fields[n++] = group;
	if (d->rule && snprintf(rule, sizeof(rule), "CCXD_RULE=%s", d->rule) > 0)
		fields[n++] = rule;
	if (d->decision && snprintf(decision, sizeof(decision), "CCXD_DECISION=%s", d->decision) > 0)
		fields[n++] = decision;
	fields[n] = NULL;
	va_start(ap, fmt);
	r = log_va(level, 0, fields, fmt, ap);
	va_end(ap);
	return r;
}

static bool ratelimit_over(const struct log_ratelimit *rl, uint64_t now_usec) {
	return now_usec - rl->begin_usec >= rl->interval_usec || now_usec < rl->begin_usec;
}

bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_usec) {
	/* A new interval starts with a line that comes after the last is over
	 * and nothing was held back in it (held lines are summed up first). */
	if (ratelimit_over(rl, now_usec) && rl->held == 0) {
		rl->begin_usec = now_usec;
		rl->passed = 0;
	}
	if (rl->passed < rl->burst) {
		rl->passed++;
		return true;
	}
	rl->held++;
	return false;
}

uint64_t log_ratelimit_held(struct log_ratelimit *rl, uint64_t now_usec) {
	uint64_t held = rl->held;

	if (held == 0 || !ratelimit_over(rl, now_usec))
		return 0;
	rl->held = 0;
	rl->begin_usec = now_usec;
	rl->passed = 0;
	return held;
}
