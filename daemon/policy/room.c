#include "room.h"

#include <stdlib.h>
#include <string.h>

/* Another group that sits somewhere, whose demand counts there. */
static bool holds_ccx(const struct room_view *v, size_t i) {
	return i != v->self && v->groups[i].seated && v->groups[i].ccx >= 0;
}

/* The CCX of cpu, -1 for none. */
static int ccx_of_cpu(const struct topology *t, int cpu) {
	cpu_set_t one;
	unsigned ccx;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -1;
	CPU_ZERO(&one);
	CPU_SET((unsigned)cpu, &one);
	return placer_ccxs_of(t, &one, &ccx, 1) == 1 ? (int)ccx : -1;
}

/* Takes away what grp's members used from the CCX each ran on last. */
static void subtract_members(const struct topology *t, const struct sampler_result *s, const struct group *grp,
			     double *busy) {
	for (size_t i = 0; i < grp->n_pids; i++) {
		long k = sampler_result_index(s, grp->pids[i]);
		int ccx = k >= 0 ? ccx_of_cpu(t, s->procs[k].last_cpu) : -1;
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

/* Other programs' load on each CCX, in CPUs: the measured load less what
 * self used (it is the one being placed) and what the seated groups used
 * (counted by their demand instead). */
static void other_load(const struct room_view *v, double *load) {
	if (!measured_load(v, load))
		return;
	for (size_t i = 0; i < v->n_groups; i++)
		if (i == v->self || holds_ccx(v, i))
			subtract_members(v->t, v->sample, v->groups[i].group, load);
	for (unsigned c = 0; c < v->t->n_ccx; c++)
		if (load[c] < 0)
			load[c] = 0;   /* clock ticks are coarse */
}

void room_taken_on(const struct room_view *v, int ccx, cpu_set_t *taken) {
	CPU_ZERO(taken);
	for (size_t i = 0; ccx >= 0 && i < v->n_groups; i++)
		if (holds_ccx(v, i) && v->groups[i].ccx == ccx)
			CPU_OR(taken, taken, &v->groups[i].cpus);
}

unsigned *room_threads(const struct room_view *v, const struct group *grp) {
	unsigned *threads = calloc(grp->n_pids ? grp->n_pids : 1, sizeof(*threads));

	for (size_t i = 0; threads && v->sample && i < grp->n_pids; i++) {
		long k = sampler_result_index(v->sample, grp->pids[i]);
		threads[i] = k >= 0 ? v->sample->procs[k].busy_threads : 0;
	}
	return threads;
}

int room_choose_ccx(const struct room_view *v, enum seating s, const unsigned *threads, cpu_set_t *taken) {
	const struct group *g = v->groups[v->self].group;
	size_t n = v->t->n_ccx ? v->t->n_ccx : 1;
	double *busy = calloc(n, sizeof(*busy)), *load = calloc(n, sizeof(*load));
	cpu_set_t *held = calloc(n, sizeof(*held));
	struct placer_group_need need = { g->demand, s, g->n_pids, threads };
	int ccx = -1;

	if (busy && load && held) {
		for (size_t i = 0; i < v->n_groups; i++)
			if (holds_ccx(v, i) && (unsigned)v->groups[i].ccx < n)
				busy[v->groups[i].ccx] += v->groups[i].group->demand;
		for (unsigned c = 0; c < v->t->n_ccx; c++)
			room_taken_on(v, (int)c, &held[c]);
		other_load(v, load);
		ccx = placer_group_ccx(v->t, &need, busy, load, held);
	}
	free(busy);
	free(load);
	free(held);
	room_taken_on(v, ccx, taken);
	return ccx;
}

struct crowding_ccx *room_around(const struct room_view *v) {
	size_t n = v->t->n_ccx ? v->t->n_ccx : 1;
	double *load = calloc(n, sizeof(*load));
	bool measured = load && measured_load(v, load);
	struct crowding_ccx *c = load ? crowding_ccxs(v->t, measured ? v->sample->cpu_load : NULL,
						      measured ? v->sample->n_cpu_load : 0) : NULL;

	if (c) {
		other_load(v, load);
		for (unsigned k = 0; k < v->t->n_ccx; k++)
			c[k].taken = load[k];
		for (size_t i = 0; i < v->n_groups; i++)
			if (holds_ccx(v, i) && (unsigned)v->groups[i].ccx < v->t->n_ccx)
				c[v->groups[i].ccx].taken += v->groups[i].group->demand;
	}
	free(load);
	return c;
}
