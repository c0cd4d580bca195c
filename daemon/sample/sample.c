#include "sample.h"

#include <stdlib.h>

const char *channel_kind_to_string(enum channel_kind k) {
	switch (k) {
	case CHANNEL_PIPE: return "pipe";
	case CHANNEL_UNIX: return "unix";
	case CHANNEL_TCP: return "tcp";
	case CHANNEL_THREADS: return "threads";
	}
	return "unknown";
}

void sampler_result_free(struct sampler_result *r) {
	if (!r)
		return;
	free(r->procs);
	free(r->channels);
	free(r->cpu_load);
	free(r);
}

long sampler_result_index(const struct sampler_result *res, pid_t pid) {
	size_t lo = 0, hi = res->n_procs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (res->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < res->n_procs && res->procs[lo].pid == pid ? (long)lo : -1;
}
