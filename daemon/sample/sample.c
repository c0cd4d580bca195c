#include "sample.h"

#include <stdlib.h>

#include "util.h"

static const char *const kind_names[] = {
	[CHANNEL_PIPE] = "pipe",
	[CHANNEL_UNIX] = "unix",
	[CHANNEL_TCP] = "tcp",
	[CHANNEL_THREADS] = "threads",
};

const char *channel_kind_to_string(enum channel_kind k) {
	const char *name = NAME_OF(kind_names, k);

	return name ? name : "unknown";
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
