#include "crowding.h"

#include <stdlib.h>

#include "placer.h"

/* Whether c has room for demand CPUs besides its other work (see
 * CROWDING_SLACK). */
static bool fits(const struct crowding_ccx *c, double demand) {
	bool full = c->busy > c->cpus - CROWDING_SLACK && c->taken >= CROWDING_SLACK;

	return c->cpus > 0 && !full && c->cpus - c->taken + CROWDING_SLACK >= demand;
}

static double room_of(const struct crowding_ccx *c) {
	return c->cpus - c->taken;
}

bool crowding_sample(unsigned *strikes, double waited, double base, const struct crowding_ccx *home, double demand,
		     const struct crowding_options *o) {
	bool crowded = o->max_wait > 0 && waited >= 0 && base >= 0 && waited - base >= o->max_wait &&
		       !fits(home, demand);

	*strikes = crowded ? *strikes + 1 : 0;
	return crowded && *strikes >= (o->samples ? o->samples : 1);
}

int crowding_target(const struct crowding_ccx *ccx, size_t n, int from, double demand) {
	int best = -1;

	for (size_t c = 0; c < n; c++) {
		if ((int)c == from || !fits(&ccx[c], demand))
			continue;
		if (best < 0 || room_of(&ccx[c]) > room_of(&ccx[best]))
			best = (int)c;
	}
	return best;
}

unsigned crowding_distance(int numa_a, int package_a, int numa_b, int package_b) {
	if (numa_a >= 0 && numa_a == numa_b)
		return 0;
	if (package_a >= 0 && package_a == package_b)
		return 1;
	return 2;
}

int crowding_spill_target(const struct crowding_ccx *ccx, size_t n, int from, double demand) {
	double lacks = demand - room_of(&ccx[from]);
	int best = -1;

	for (size_t c = 0; c < n; c++) {
		if ((int)c == from || !fits(&ccx[c], lacks))
			continue;
		if (best < 0 || ccx[c].distance < ccx[best].distance ||
		    (ccx[c].distance == ccx[best].distance && room_of(&ccx[c]) > room_of(&ccx[best])))
			best = (int)c;
	}
	return best;
}

bool crowding_room_again(unsigned *streak, const struct crowding_ccx *home, double demand,
			 const struct crowding_options *o) {
	*streak = fits(home, demand) ? *streak + 1 : 0;
	return *streak >= (o->samples ? o->samples : 1);
}

bool crowding_alone_add(struct crowding_alone *a, unsigned window, double waited, double used, double *base,
			double *need) {
	if (window > CROWDING_ALONE_MAX)
		window = CROWDING_ALONE_MAX;
	if (a->n < window) {
		if (waited >= 0) {
			a->waits[a->n] = waited;
			a->cpu[a->n++] = used;
		}
		return false;
	}
	*base = validator_median(a->waits, a->n);
	*need = validator_median(a->cpu, a->n);
	return true;
}

struct crowding_ccx *crowding_ccxs(const struct topology *t, const double *cpu_load, size_t n_cpus) {
	size_t n = t->n_ccx ? t->n_ccx : 1;
	struct crowding_ccx *c = calloc(n, sizeof(*c));
	double *load = calloc(n, sizeof(*load));

	if (c && load) {
		if (cpu_load)
			placer_ccx_load(t, cpu_load, n_cpus, load);
		for (unsigned k = 0; k < t->n_ccx; k++)
			c[k] = (struct crowding_ccx){
				.cpus = t->ccx[k].usable ? t->ccx[k].n_pus : 0, .busy = load[k], .taken = load[k]
			};
	} else {
		free(c);
		c = NULL;
	}
	free(load);
	return c;
}
