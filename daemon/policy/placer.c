#include "placer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cpulist.h"
#include "util.h"

struct candidate {
	unsigned ccx;
	uint64_t cache_size;
	uint64_t clock;            /* 0 where the machine does not say */
	bool memory;               /* its NUMA node has memory */
	unsigned load;
	enum rule_prefer prefer;
};

/* prefer = cache: the larger L3 first. prefer = frequency: the higher clock
 * first where the machine says what its cores reach; where it says nothing,
 * the smaller L3, which on parts with unequal L3s (X3D) is the one that
 * clocks higher. */
static int compare_preference(const struct candidate *x, const struct candidate *y) {
	if (x->prefer == RULE_PREFER_CACHE && x->cache_size != y->cache_size)
		return x->cache_size > y->cache_size ? -1 : 1;
	if (x->prefer != RULE_PREFER_FREQUENCY)
		return 0;
	if (x->clock && y->clock)
		return (x->clock < y->clock) - (x->clock > y->clock);
	if (x->cache_size != y->cache_size)
		return x->cache_size < y->cache_size ? -1 : 1;
	return 0;
}

static int compare_candidates(const void *a, const void *b) {
	const struct candidate *x = a, *y = b;
	int r = compare_preference(x, y);

	if (r)
		return r;
	/* A CCX whose NUMA node has no memory reaches all of it remotely. */
	if (x->memory != y->memory)
		return x->memory ? -1 : 1;
	if (x->load != y->load)
		return x->load < y->load ? -1 : 1;
	return (x->ccx > y->ccx) - (x->ccx < y->ccx);
}

int placer_rule_candidates(const struct topology *t, const struct rule *r,
			   const struct placer_context *ctx, unsigned *order) {
	struct candidate *c = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return -ENOMEM;
	if (r->ccx_auto) {
		for (unsigned i = 0; i < t->n_ccx; i++) {
			cpu_set_t both;
			if (!t->ccx[i].usable)
				continue;
			CPU_AND(&both, &t->ccx[i].cpus, ctx && ctx->allowed ? ctx->allowed : &t->ccx[i].cpus);
			if (CPU_COUNT(&both) > 0)
				c[n++].ccx = i;
		}
	} else {
		for (size_t i = 0; i < r->n_ccx && n < t->n_ccx; i++) {
			if (r->ccx[i] >= t->n_ccx || !t->ccx[r->ccx[i]].usable) {
				free(c);
				return -ENOENT;
			}
			c[n++].ccx = r->ccx[i];
		}
	}
	for (size_t i = 0; i < n; i++) {
		c[i].cache_size = t->ccx[c[i].ccx].cache_size;
		c[i].clock = t->clock_source != TOPOLOGY_CLOCK_NONE ? t->ccx[c[i].ccx].clock : 0;
		c[i].memory = !t->ccx[c[i].ccx].no_local_memory;
		c[i].load = ctx && ctx->processes && c[i].ccx < ctx->n_ccx ? ctx->processes[c[i].ccx] : 0;
		c[i].prefer = r->prefer;
	}
	qsort(c, n, sizeof(*c), compare_candidates);
	for (size_t i = 0; i < n; i++)
		order[i] = c[i].ccx;
	free(c);
	return n ? (int)n : -ENOENT;
}

void placer_ccx_cpus(const struct topology_ccx *ccx, enum rule_smt smt, cpu_set_t *ret) {
	if (smt == RULE_SMT_ALLOW) {
		*ret = ccx->cpus;
		return;
	}
	CPU_ZERO(ret);
	for (unsigned i = 0; i < ccx->n_cores; i++)
		for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &ccx->cores[i].pus)) {
				CPU_SET(cpu, ret);
				break;
			}
}

bool placer_rule_balances(const struct rule *r) {
	return (r->policy == RULE_POLICY_PIN && r->ccx_auto) || r->policy == RULE_POLICY_COMPACT;
}

bool placer_rule_weighs_load(const struct rule *r) {
	return r->ccx_auto || r->n_ccx > 1;
}

int placer_rule_cpus(const struct topology *t, const struct rule *r, const struct placer_context *ctx,
		     cpu_set_t *ret, unsigned *ccx) {
	unsigned *order;
	int n;

	if (r->policy != RULE_POLICY_PIN && r->policy != RULE_POLICY_COMPACT && r->policy != RULE_POLICY_SPREAD)
		return -EOPNOTSUPP;
	order = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	n = placer_rule_candidates(t, r, ctx, order);
	if (n < 0) {
		free(order);
		return n;
	}
	/* pin with a list and spread take all of it; otherwise one CCX, the best. */
	if ((r->policy == RULE_POLICY_PIN && !r->ccx_auto) || r->policy == RULE_POLICY_SPREAD) {
		CPU_ZERO(ret);
		for (int i = 0; i < n; i++) {
			cpu_set_t one;
			placer_ccx_cpus(&t->ccx[order[i]], r->smt, &one);
			CPU_OR(ret, ret, &one);
		}
		*ccx = order[0];
	} else {
		placer_ccx_cpus(&t->ccx[order[0]], r->smt, ret);
		*ccx = order[0];
	}
	free(order);
	return 0;
}

int placer_spread_sets(const struct topology *t, const struct rule *r, const struct placer_context *ctx,
		       cpu_set_t *sets) {
	unsigned *order = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*order));
	int n;

	if (!order)
		return -ENOMEM;
	n = placer_rule_candidates(t, r, ctx, order);
	for (int i = 0; i < n; i++)
		placer_ccx_cpus(&t->ccx[order[i]], r->smt, &sets[i]);
	free(order);
	return n;
}

size_t placer_ccxs_of(const struct topology *t, const cpu_set_t *cpus, unsigned *ret, size_t max) {
	size_t n = 0;

	for (unsigned i = 0; i < t->n_ccx && n < max; i++) {
		cpu_set_t both;
		CPU_AND(&both, &t->ccx[i].cpus, cpus);
		if (CPU_COUNT(&both) > 0)
			ret[n++] = i;
	}
	return n;
}

char *placer_ccx_list(const struct topology *t, const cpu_set_t *cpus, char *buf, size_t size) {
	unsigned idx[CPU_SETSIZE];
	size_t n = placer_ccxs_of(t, cpus, idx, CPU_SETSIZE);
	cpu_set_t ccxs;

	/* A CPU list formatter formats any list of small integers. */
	CPU_ZERO(&ccxs);
	for (size_t i = 0; i < n; i++)
		CPU_SET(idx[i], &ccxs);
	return cpulist_format(&ccxs, buf, size);
}

double placer_largest_ccx(const struct topology *t) {
	unsigned most = 0;

	for (unsigned i = 0; i < t->n_ccx; i++)
		if (t->ccx[i].usable && t->ccx[i].n_pus > most)
			most = t->ccx[i].n_pus;
	return most;
}

void placer_ccx_load(const struct topology *t, const double *cpu_load, size_t n_cpus, double *busy) {
	for (unsigned c = 0; c < t->n_ccx; c++) {
		busy[c] = 0.0;
		for (size_t cpu = 0; cpu < n_cpus && cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &t->ccx[c].cpus))
				busy[c] += cpu_load[cpu];
	}
}

/* Whether CCX c beats the best so far for a group: local memory first, then
 * the most room left once other programs' load is counted. */
static bool better_room(const struct topology *t, const double *room, const double *load, unsigned c, int best) {
	double left = room[c] - (load ? load[c] : 0.0), best_left;

	if (best < 0)
		return true;
	if (t->ccx[c].no_local_memory != t->ccx[best].no_local_memory)
		return !t->ccx[c].no_local_memory;
	best_left = room[best] - (load ? load[best] : 0.0);
	return left > best_left;
}

/* Each CCX's room in CPUs after what ccxd seated there (busy); -1 for an unusable one. */
static double *ccx_room(const struct topology *t, const double *busy) {
	double *room = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*room));

	for (unsigned c = 0; room && c < t->n_ccx; c++)
		room[c] = t->ccx[c].usable ? (double)t->ccx[c].n_pus - (busy ? busy[c] : 0.0) : -1.0;
	return room;
}

size_t placer_groups(const struct topology *t, const double *demand, size_t n_groups, const double *busy,
		     const double *load, int *ccx) {
	double *room = ccx_room(t, busy);
	size_t *order = malloc((n_groups ? n_groups : 1) * sizeof(*order)), placed = 0;

	/* Largest demand first; a stable insertion sort keeps the given order
	 * among equals, and the number of groups is small. */
	for (size_t i = 0; order && i < n_groups; i++) {
		size_t k = i;
		for (; k > 0 && demand[order[k - 1]] < demand[i]; k--)
			order[k] = order[k - 1];
		order[k] = i;
	}
	for (size_t i = 0; i < n_groups; i++) {
		size_t g = order ? order[i] : i;
		int best = -1;
		for (unsigned c = 0; room && c < t->n_ccx; c++)
			if (room[c] >= demand[g] && better_room(t, room, load, c, best))
				best = (int)c;
		ccx[g] = best;
		if (best >= 0) {
			room[best] -= demand[g];
			placed++;
		}
	}
	free(order);
	free(room);
	return placed;
}

int placer_group_ccx(const struct topology *t, const struct placer_group_need *need, const double *busy,
		     const double *load, const cpu_set_t *taken) {
	double *room = ccx_room(t, busy);
	int best = -1;
	bool best_fits = false;

	for (unsigned c = 0; room && c < t->n_ccx; c++) {
		bool fits;
		if (room[c] < need->demand)
			continue;
		fits = placer_seat_fits(&t->ccx[c], need->seating, need->n, need->threads, taken ? &taken[c] : NULL);
		/* Where the seating fits in CPUs that no other group holds, it
		 * gets what it was counted for: such a CCX comes first. */
		if (best < 0 || (fits && !best_fits) ||
		    (fits == best_fits && better_room(t, room, load, c, best))) {
			best = (int)c;
			best_fits = fits;
		}
	}
	free(room);
	return best;
}

static const char *const seating_names[_SEATING_MAX] = {
	[SEATING_CORES] = "one-per-core",
	[SEATING_SMT] = "smt-siblings",
	[SEATING_SHARED] = "shared-cpu",
	[SEATING_CCX] = "whole-ccx",
};

const char *seating_to_string(enum seating s) {
	const char *name = NAME_OF(seating_names, s);

	return name ? name : "unknown";
}

/* Cores of ccx, free ones (no CPU in taken) first, each group in CCX order;
 * *n_free gets how many are free. */
static size_t cores_by_freedom(const struct topology_ccx *ccx, const cpu_set_t *taken, unsigned *order,
			       size_t *n_free) {
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < ccx->n_cores; i++) {
			cpu_set_t both;
			bool free_core;
			CPU_AND(&both, &ccx->cores[i].pus, taken ? taken : &both);
			free_core = !taken || CPU_COUNT(&both) == 0;
			if (free_core == (pass == 0))
				order[n++] = i;
			if (pass == 0)
				*n_free = n;
		}
	return n;
}

static int first_pu(const cpu_set_t *set, int after) {
	for (int cpu = after + 1; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET((size_t)cpu, set))
			return cpu;
	return -1;
}

static size_t width(const unsigned *threads, size_t i) {
	return threads && threads[i] > 1 ? threads[i] : 1;
}

/* One-per-core: member i gets width(i) whole cores of the n_order in order. */
static int seat_cores(const unsigned *order, size_t n_order, const struct topology_ccx *ccx, size_t n,
		      const unsigned *threads, size_t total, cpu_set_t *member_cpus) {
	size_t k = 0;

	if (total > n_order)
		return -ENOSPC;
	for (size_t i = 0; i < n; i++) {
		CPU_ZERO(&member_cpus[i]);
		for (size_t j = 0; j < width(threads, i); j++, k++)
			CPU_OR(&member_cpus[i], &member_cpus[i], &ccx->cores[order[k]].pus);
	}
	return 0;
}

/* SMT siblings: members of one thread each share the PUs of one core (the
 * first, free ones first, with a PU for each); members with busy threads
 * fill cores' PUs in turn, the fewest cores for all their threads. */
static int seat_smt(const unsigned *order, size_t n_order, const struct topology_ccx *ccx, size_t n,
		    const unsigned *threads, size_t total, bool single, cpu_set_t *member_cpus) {
	size_t k = 0, i = 0, given = 0;
	bool smt = false;

	for (unsigned c = 0; c < ccx->n_cores; c++)
		if (CPU_COUNT(&ccx->cores[c].pus) > 1)
			smt = true;
	if (!smt || total < 2)
		return -ENOSPC;
	if (single) {
		while (k < n_order && (size_t)CPU_COUNT(&ccx->cores[order[k]].pus) < total)
			k++;
		if (k == n_order)
			return -ENOSPC;
	}
	CPU_ZERO(&member_cpus[0]);
	for (; k < n_order && i < n; k++)
		for (int cpu = first_pu(&ccx->cores[order[k]].pus, -1); cpu >= 0 && i < n;
		     cpu = first_pu(&ccx->cores[order[k]].pus, cpu)) {
			CPU_SET((size_t)cpu, &member_cpus[i]);
			if (++given == width(threads, i) && ++i < n) {
				CPU_ZERO(&member_cpus[i]);
				given = 0;
			}
		}
	return i == n ? 0 : -ENOSPC;
}

/* Seats the members on the first n_order cores of order (see placer_seat()). */
static int seat_on(const unsigned *order, size_t n_order, const struct topology_ccx *ccx, enum seating s, size_t n,
		   const unsigned *threads, cpu_set_t *member_cpus) {
	size_t total = 0;
	bool single = true;
	int cpu;

	for (size_t i = 0; i < n; i++) {
		total += width(threads, i);
		single = single && width(threads, i) == 1;
	}
	switch (s) {
	case SEATING_CORES:
		return seat_cores(order, n_order, ccx, n, threads, total, member_cpus);
	case SEATING_SMT:
		return seat_smt(order, n_order, ccx, n, threads, total, single, member_cpus);
	case SEATING_SHARED:
		/* One CPU for several busy threads of one process would make
		 * them wait on each other: no room for them. */
		cpu = n_order && single ? first_pu(&ccx->cores[order[0]].pus, -1) : -1;
		if (cpu < 0)
			return -ENOSPC;
		for (size_t i = 0; i < n; i++) {
			CPU_ZERO(&member_cpus[i]);
			CPU_SET((size_t)cpu, &member_cpus[i]);
		}
		return 0;
	case SEATING_CCX:
		/* The kernel balances them there: no core is theirs alone. */
		if (ccx->n_pus == 0)
			return -ENOSPC;
		for (size_t i = 0; i < n; i++)
			member_cpus[i] = ccx->cpus;
		return 0;
	default:
		return -EINVAL;
	}
}

int placer_seat(const struct topology_ccx *ccx, enum seating s, size_t n, const unsigned *threads,
		const cpu_set_t *taken, cpu_set_t *member_cpus) {
	unsigned *order = calloc(ccx->n_cores ? ccx->n_cores : 1, sizeof(*order));
	size_t n_free = 0, n_order;
	int r;

	if (!order)
		return -ENOMEM;
	n_order = cores_by_freedom(ccx, taken, order, &n_free);
	r = seat_on(order, n_order, ccx, s, n, threads, member_cpus);
	free(order);
	return r;
}

bool placer_seat_fits(const struct topology_ccx *ccx, enum seating s, size_t n, const unsigned *threads,
		      const cpu_set_t *taken) {
	unsigned *order = calloc(ccx->n_cores ? ccx->n_cores : 1, sizeof(*order));
	cpu_set_t *cpus = calloc(n ? n : 1, sizeof(*cpus));
	size_t n_free = 0;
	bool fits = false;

	if (order && cpus) {
		cores_by_freedom(ccx, taken, order, &n_free);
		fits = seat_on(order, n_free, ccx, s, n, threads, cpus) == 0;
	}
	free(order);
	free(cpus);
	return fits;
}
