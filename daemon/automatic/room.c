#include "room.h"

#include <stdlib.h>
#include <string.h>

/* Seated (or, in dry-run, decided): its demand is counted where it sits. */
static bool holds_ccx(const struct autoplace_group *g) {
	return g->ccx >= 0 && (g->x.state == EXPERIMENT_VALIDATING || g->x.state == EXPERIMENT_KEPT ||
				g->x.state == EXPERIMENT_DRY_RUN);
}

/* Takes away what grp's members used from the CCX each ran on last. */
static void subtract_members(const struct topology *t, const struct sampler_result *s, const struct group *grp,
			     double *busy) {
	for (size_t i = 0; i < grp->n_pids; i++) {
		long k = sampler_result_index(s, grp->pids[i]);
		int ccx = k >= 0 && s->procs[k].last_cpu >= 0 ? topology_ccx_of_cpu(t, (unsigned)s->procs[k].last_cpu) : -1;
		if (ccx >= 0)
			busy[ccx] -= s->procs[k].cpu;
	}
}

/* All the load on each CCX, in CPUs, as /proc/stat saw it on its CPUs;
 * false, and all 0, where there is no reading, or for an XML topology:
 * another machine's, about which this one's load says nothing. */
static bool measured_load(const struct room_view *v, double *load) {
	const struct sampler_result *s = v->sample;

	if (!s || s->n_cpu_load == 0 || (v->t->source && strncmp(v->t->source, "xml:", 4) == 0))
		return false;
	placer_ccx_load(v->t, s->cpu_load, s->n_cpu_load, load);
	return true;
}

/* Other programs' load on each CCX, in CPUs: the measured load less what g
 * itself used (it is the one being placed) and what the seated groups used
 * (counted by their demand instead). */
static void other_load(const struct room_view *v, const struct autoplace_group *g, double *load) {
	if (!measured_load(v, load))
		return;
	for (size_t i = 0; i < v->n_groups; i++)
		if (&v->groups[i] == g || holds_ccx(&v->groups[i]))
			subtract_members(v->t, v->sample, &v->groups[i].group, load);
	for (unsigned c = 0; c < v->t->n_ccx; c++)
		if (load[c] < 0)
			load[c] = 0;   /* clock ticks are coarse */
}

void room_taken_on(const struct room_view *v, const struct autoplace_group *g, int ccx, cpu_set_t *taken) {
	CPU_ZERO(taken);
	for (size_t i = 0; ccx >= 0 && i < v->n_groups; i++) {
		const struct autoplace_group *o = &v->groups[i];
		if (o != g && o->ccx == ccx && holds_ccx(o))
			CPU_OR(taken, taken, &o->cpus);
	}
}

unsigned *room_threads(const struct room_view *v, const struct group *grp) {
	unsigned *threads = calloc(grp->n_pids ? grp->n_pids : 1, sizeof(*threads));

	for (size_t i = 0; threads && v->sample && i < grp->n_pids; i++) {
		long k = sampler_result_index(v->sample, grp->pids[i]);
		threads[i] = k >= 0 ? v->sample->procs[k].busy_threads : 0;
	}
	return threads;
}

int room_choose_ccx(const struct room_view *v, const struct autoplace_group *g, enum seating s,
		    const unsigned *threads, cpu_set_t *taken) {
	size_t n = v->t->n_ccx ? v->t->n_ccx : 1;
	double *busy = calloc(n, sizeof(*busy)), *load = calloc(n, sizeof(*load));
	cpu_set_t *held = calloc(n, sizeof(*held));
	struct placer_group_need need = { g->group.demand, s, g->group.n_pids, threads };
	int ccx = -1;

	if (busy && load && held) {
		for (size_t i = 0; i < v->n_groups; i++) {
			const struct autoplace_group *o = &v->groups[i];
			if (o != g && holds_ccx(o))
				busy[o->ccx] += o->group.demand;
		}
		for (unsigned c = 0; c < v->t->n_ccx; c++)
			room_taken_on(v, g, (int)c, &held[c]);
		other_load(v, g, load);
		ccx = placer_group_ccx(v->t, &need, busy, load, held);
	}
	free(busy);
	free(load);
	free(held);
	room_taken_on(v, g, ccx, taken);
	return ccx;
}

struct crowding_ccx *room_around(const struct room_view *v, const struct autoplace_group *g) {
	size_t n = v->t->n_ccx ? v->t->n_ccx : 1;
	struct crowding_ccx *c = calloc(n, sizeof(*c));
	double *load = calloc(n, sizeof(*load)), *busy = calloc(n, sizeof(*busy));

	if (!c || !load || !busy) {
		free(c);
		c = NULL;
		goto out;
	}
	other_load(v, g, load);
	measured_load(v, busy);
	for (unsigned k = 0; k < v->t->n_ccx; k++)
		c[k] = (struct crowding_ccx){
			.cpus = v->t->ccx[k].usable ? v->t->ccx[k].n_pus : 0, .taken = load[k], .busy = busy[k]
		};
	for (size_t i = 0; i < v->n_groups; i++) {
		const struct autoplace_group *o = &v->groups[i];
		if (o != g && holds_ccx(o) && (unsigned)o->ccx < v->t->n_ccx)
			c[o->ccx].taken += o->group.demand;
	}
out:
	free(load);
	free(busy);
	return c;
}
