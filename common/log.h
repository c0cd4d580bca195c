/* Logging. Under systemd (stderr is the journal's stream, JOURNAL_STREAM) each
 * message goes to journald's native socket with structured fields; otherwise
 * to stderr as "ident: level: message". It never blocks: a message journald
 * has no room for is dropped and counted (log_dropped()), because a daemon
 * that stalls in its logging stops placing processes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <syslog.h>

/* Where journald listens for native-protocol datagrams. */
#define LOG_JOURNAL_SOCKET "/run/systemd/journal/socket"

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_ident(const char *ident);

/* Sends every later message to the journal socket at path instead of deciding
 * by JOURNAL_STREAM (tests use a socket of their own). Returns 0 or -errno;
 * on failure logging goes on to stderr. */
int log_open_journal(const char *path);
void log_close(void);

/* Keeps every later message on stderr, the journal's stream or not. For a
 * program that exits as soon as it has spoken: journald learns a datagram
 * sender's unit from its /proc entry, which may be gone by then (the line
 * would be missing from journalctl -u), while a stream's unit is known from
 * the start. */
void log_to_stderr(void);

/* Messages dropped because the journal socket was full. */
uint64_t log_dropped(void);

/* Logs at level and returns r, so that callers can log and fail in one step:
 *   return log_error_errno(r, "Failed to read %s: %m", path);
 * %m prints strerror(-r). */
int log_internal(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same with extra journal fields: a NULL-terminated list of "KEY=value"
 * strings, KEY of upper-case letters, digits and '_' (not first). On stderr
 * only the message is shown. */
int log_fields(int level, int r, const char *const *fields, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* What a placement decision was about: journald gets it as CCXD_PID=,
 * CCXD_COMM=, CCXD_CCX=, CCXD_GROUP=, CCXD_RULE= and CCXD_DECISION=, so that
 *   journalctl -u ccxd CCXD_COMM=x265
 * finds every decision about a program. NULL fields are left out. */
struct log_decision {
	pid_t pid;
	const char *comm;
	const char *ccx;          /* the CCXs it went to, "1" or "0,2" */
	const char *group;        /* the group of processes decided together */
	const char *rule;         /* the rule that decided; NULL when by hand */
	const char *decision;     /* what was done: "pin", "release", ... */
};

int log_decision(int level, const struct log_decision *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Lines that other users can cause at their own rate (a pin at each exec
 * of a program a rule names): at most burst in each interval; the rest are
 * counted, for one line that sums them up once the interval is over. Pure:
 * the caller gives the time (CLOCK_MONOTONIC). */
struct log_ratelimit {
	uint64_t interval_usec;
	unsigned burst;
	uint64_t begin_usec;      /* when the current interval began */
	unsigned passed;          /* lines let through in it */
	uint64_t held;            /* lines held back in it */
};

/* Whether a line may go out at now_usec; counts it as held when not. */
bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_usec);

/* Once the interval in which lines were held back is over: how many, for
 * the line that sums them up (and a new interval); 0 otherwise. */
uint64_t log_ratelimit_held(struct log_ratelimit *rl, uint64_t now_usec);

/* Encodes one journal entry in journald's native protocol into buf: PRIORITY,
 * SYSLOG_IDENTIFIER, MESSAGE, ERRNO (when errnum > 0) and the valid fields;
 * values holding a newline take the protocol's length-prefixed form. Fields
 * with invalid keys are left out. Returns the length, or -ENOBUFS when buf is
 * too small. */
ssize_t log_journal_format(char *buf, size_t size, int level, const char *ident, int errnum,
			   const char *const *fields, const char *message);

#define log_debug(...)   ((void)log_internal(LOG_DEBUG, 0, __VA_ARGS__))
#define log_info(...)    ((void)log_internal(LOG_INFO, 0, __VA_ARGS__))
#define log_notice(...)  ((void)log_internal(LOG_NOTICE, 0, __VA_ARGS__))
#define log_warning(...) ((void)log_internal(LOG_WARNING, 0, __VA_ARGS__))
#define log_error(...)   ((void)log_internal(LOG_ERR, 0, __VA_ARGS__))

#define log_debug_errno(r, ...)   log_internal(LOG_DEBUG, (r), __VA_ARGS__)
#define log_info_errno(r, ...)    log_internal(LOG_INFO, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_error_errno(r, ...)   log_internal(LOG_ERR, (r), __VA_ARGS__)
