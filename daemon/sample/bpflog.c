#include "bpflog.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

int bpflog_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
	char msg[512];
	size_t len;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	if (len > 0 && msg[len - 1] == '\n')
		msg[len - 1] = '\0';
	log_debug("%s", msg);   /* "libbpf: ..." */
	return 0;
}

void bpflog_verifier_said(const char *log, char *said, size_t size) {
	static const char *const stats[] = { "processed ", "verification time", "stack depth", "-- " };
	const char *line = log;

	said[0] = '\0';
	while (line && *line) {
		const char *end = strchrnul(line, '\n');
		bool stat = false;
		for (size_t i = 0; i < sizeof(stats) / sizeof(stats[0]); i++)
			stat |= strncmp(line, stats[i], strlen(stats[i])) == 0;
		if (!stat && end > line)
			snprintf(said, size, "; the verifier: %.*s", (int)(end - line), line);
		line = *end ? end + 1 : NULL;
	}
}
