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

struct bpf_object *bpflog_open(const char *bytes, size_t size, char *log) {
	LIBBPF_OPTS(bpf_object_open_opts, opts, .kernel_log_buf = log, .kernel_log_size = BPFLOG_SIZE);

	return bpf_object__open_mem(bytes, size, &opts);
}

int bpflog_load(struct bpf_object *obj, const char *log) {
	int r = bpf_object__load(obj);

	if (r < 0 && log[0])
		log_debug("libbpf: the verifier's log:\n%s", log);
	return r;
}
