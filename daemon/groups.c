#include "groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t find(size_t *parent, size_t i) {
	while (parent[i] != i) {
		parent[i] = parent[parent[i]];   /* path halving */
		i = parent[i];
	}
	return i;
}

static int compare_traffic(const void *a, const void *b) {
	const struct group *x = a, *y = b;

	if (x->bytes_per_s != y->bytes_per_s)
		return x->bytes_per_s > y->bytes_per_s ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

void groups_free(struct group *groups, size_t n) {
	for (size_t i = 0; groups && i < n; i++) {
		free(groups[i].pids);
		free(groups[i].channels);
	}
	free(groups);
}

int groups_build(const struct sampler_result *s, double min_rate, struct group **ret, size_t *n_ret) {
	size_t n = s->n_procs, n_groups = 0;
	size_t *parent = malloc((n ? n : 1) * sizeof(*parent));
	long *slot = malloc((n ? n : 1) * sizeof(*slot));
	struct group *groups = calloc(n ? n : 1, sizeof(*groups));
	int r = 0;

	if (!parent || !slot || !groups) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		parent[i] = i;
		slot[i] = -1;
	}
	for (size_t c = 0; c < s->n_channels; c++) {
		long a = sampler_result_index(s, s->channels[c].from), b = sampler_result_index(s, s->channels[c].to);
		if (a < 0 || b < 0 || s->channels[c].bytes_per_s < min_rate)
			continue;
		parent[find(parent, (size_t)a)] = find(parent, (size_t)b);
	}

	/* Members, in pid order (procs are sorted by pid). */
	for (size_t i = 0; i < n; i++) {
		size_t root = find(parent, i);
		struct group *g;
		pid_t *pids;

		if (slot[root] < 0)
			slot[root] = (long)n_groups++;
		g = &groups[slot[root]];
		pids = realloc(g->pids, (g->n_pids + 1) * sizeof(*pids));
		if (!pids) {
			r = -ENOMEM;
			goto out;
		}
		g->pids = pids;
		if (g->n_pids == 0)
			g->id = s->procs[i].pid;
		g->pids[g->n_pids++] = s->procs[i].pid;
		g->cpu += s->procs[i].cpu;
	}
	for (size_t c = 0; c < s->n_channels; c++) {
		long a = sampler_result_index(s, s->channels[c].from), b = sampler_result_index(s, s->channels[c].to);
		struct group *g;
		size_t *chans;

		if (a < 0 || b < 0 || s->channels[c].bytes_per_s < min_rate)
			continue;
		g = &groups[slot[find(parent, (size_t)a)]];
		chans = realloc(g->channels, (g->n_channels + 1) * sizeof(*chans));
		if (!chans) {
			r = -ENOMEM;
			goto out;
		}
		g->channels = chans;
		g->channels[g->n_channels++] = c;
		g->bytes_per_s += s->channels[c].bytes_per_s;
	}

	/* A process alone is no group. */
	size_t k = 0;
	for (size_t i = 0; i < n_groups; i++) {
		if (groups[i].n_pids < 2) {
			free(groups[i].pids);
			free(groups[i].channels);
			continue;
		}
		groups[k++] = groups[i];
	}
	n_groups = k;
	qsort(groups, n_groups, sizeof(*groups), compare_traffic);
out:
	free(parent);
	free(slot);
	if (r < 0) {
		groups_free(groups, n_groups);
		return r;
	}
	*ret = groups;
	*n_ret = n_groups;
	return 0;
}
