/* Logging to stderr, with the kernel-style "<N>" priority prefix that journald
 * understands when stderr is connected to it (JOURNAL_STREAM). */
#pragma once

#include <syslog.h>

void log_set_max_level(int level);
int log_get_max_level(void);
void log_set_ident(const char *ident);

/* Logs at level and returns r, so that callers can log and fail in one step:
 *   return log_error_errno(r, "Failed to read %s: %m", path);
 * %m prints strerror(-r). */
int log_internal(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_debug(...)   ((void)log_internal(LOG_DEBUG, 0, __VA_ARGS__))
#define log_info(...)    ((void)log_internal(LOG_INFO, 0, __VA_ARGS__))
#define log_notice(...)  ((void)log_internal(LOG_NOTICE, 0, __VA_ARGS__))
#define log_warning(...) ((void)log_internal(LOG_WARNING, 0, __VA_ARGS__))
#define log_error(...)   ((void)log_internal(LOG_ERR, 0, __VA_ARGS__))

#define log_debug_errno(r, ...)   log_internal(LOG_DEBUG, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_error_errno(r, ...)   log_internal(LOG_ERR, (r), __VA_ARGS__)
