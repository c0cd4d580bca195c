#include "cpuload.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "procfs.h"

struct cpuload {
	const char *root;
	struct procfs_cpu_time *cpu_times;   /* /proc/stat at the previous reading */
	size_t n_cpu_times;
};

int cpuload_new(const char *root, struct cpuload **ret) {
	struct cpuload *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->root = root;
	*ret = c;
	return 0;
}

void cpuload_free(struct cpuload *c) {
	if (!c)
		return;
	free(c->cpu_times);
	free(c);
}

/* Both readings list CPUs in order. */
void cpuload_sample(struct cpuload *c, double **load, size_t *n_load) {
	struct procfs_cpu_time *now;
	size_t n, k = 0;
	int r = procfs_read_cpu_times(c->root, &now, &n);

	*load = NULL;
	*n_load = 0;
	if (r < 0) {
		log_debug_errno(r, "Failed to read the CPUs' times, ignoring: %m");
		return;
	}
	if (c->cpu_times && n > 0) {
		for (size_t i = 0; i < n; i++)
			if (now[i].cpu + 1 > *n_load)
				*n_load = now[i].cpu + 1;
		*load = calloc(*n_load, sizeof(**load));
		if (!*load)
			*n_load = 0;
	}
	for (size_t i = 0; *load && i < n; i++) {
		const struct procfs_cpu_time *b;
		while (k < c->n_cpu_times && c->cpu_times[k].cpu < now[i].cpu)
			k++;
		if (k == c->n_cpu_times || c->cpu_times[k].cpu != now[i].cpu)
			continue;   /* came online since */
		b = &c->cpu_times[k];
		if (now[i].total > b->total && now[i].busy >= b->busy && now[i].busy - b->busy <= now[i].total - b->total)
			(*load)[now[i].cpu] = (double)(now[i].busy - b->busy) / (double)(now[i].total - b->total);
	}
	free(c->cpu_times);
	c->cpu_times = now;
	c->n_cpu_times = n;
}
