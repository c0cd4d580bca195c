/* The probe's plan: which CPU pairs and which codec masks measure what.
 * Pure functions of the topology, tested on real machines' topologies. */
#include "probe.h"

#include <errno.h>
#include <string.h>

#include "probe-internal.h"

static const char *const probe_relation_names[PROBE_RELATION_MAX][2] = {
	[PROBE_SAME_CPU]      = { "same-cpu", "same CPU" },
	[PROBE_SMT]           = { "smt-siblings", "SMT siblings" },
	[PROBE_SAME_CCX]      = { "same-ccx", "same CCX" },
	[PROBE_CROSS_CCX]     = { "cross-ccx", "different CCX" },
	[PROBE_CROSS_NUMA]    = { "cross-numa", "different NUMA node" },
	[PROBE_CROSS_PACKAGE] = { "cross-package", "different package" },
};

static const char *const probe_pattern_names[PROBE_PATTERN_MAX][2] = {
	[PROBE_CCX_SMT_PACKED]         = { "ccx-smt-packed", "cores x 2 SMT, one CCX" },
	[PROBE_CCX_ONE_PER_CORE]       = { "ccx-one-per-core", "one thread per core, one CCX" },
	[PROBE_CCX_ALL]                = { "ccx-all", "every PU of one CCX, OS chooses" },
	[PROBE_CROSS_CCX_SMT_PACKED]   = { "cross-ccx-smt-packed", "cores x 2 SMT in each of two CCXs" },
	[PROBE_CROSS_CCX_ONE_PER_CORE] = { "cross-ccx-one-per-core", "one thread per core in each of two CCXs" },
	[PROBE_MACHINE]                = { "machine", "every CPU, OS default" },
};

const char *probe_relation_name(enum probe_relation r) {
	return (unsigned)r < PROBE_RELATION_MAX ? probe_relation_names[r][0] : NULL;
}

const char *probe_relation_label(enum probe_relation r) {
	return (unsigned)r < PROBE_RELATION_MAX ? probe_relation_names[r][1] : NULL;
}

int probe_relation_from_name(const char *name) {
	for (int i = 0; name && i < PROBE_RELATION_MAX; i++)
		if (strcmp(name, probe_relation_names[i][0]) == 0)
			return i;
	return -EINVAL;
}

const char *probe_pattern_name(enum probe_pattern p) {
	return (unsigned)p < PROBE_PATTERN_MAX ? probe_pattern_names[p][0] : NULL;
}

const char *probe_pattern_label(enum probe_pattern p) {
	return (unsigned)p < PROBE_PATTERN_MAX ? probe_pattern_names[p][1] : NULL;
}

int probe_pattern_from_name(const char *name) {
	for (int i = 0; name && i < PROBE_PATTERN_MAX; i++)
		if (strcmp(name, probe_pattern_names[i][0]) == 0)
			return i;
	return -EINVAL;
}

/* Why a relation or a shape is absent. A fixed set of texts, so that plans
 * stay plain data, and so that one read back from JSON points at the same
 * static strings. */
static const char *const probe_reasons[] = {
	"no usable CPU",
	"no SMT: no core has two usable PUs",
	"no CCX with two usable cores",
	"one CCX",
	"no two CCXs share a NUMA node and a package",
	"one NUMA node",
	"no two NUMA nodes share a package",
	"one package",
	"needs an even number of threads",
	"needs a multiple of 4 threads",
	"no CCX has that many cores with two PUs",
	"no CCX has that many cores",
	"no CCX has that many PUs",
	"no two CCXs have that many cores with two PUs each",
	"no two CCXs have that many cores each",
	"absent",
};

enum {
	REASON_NO_CPU, REASON_NO_SMT, REASON_NO_TWO_CORES, REASON_ONE_CCX, REASON_NO_CCX_PAIR,
	REASON_ONE_NUMA, REASON_NO_NUMA_PAIR, REASON_ONE_PACKAGE, REASON_EVEN, REASON_FOUR,
	REASON_SMT_CORES, REASON_CORES, REASON_PUS, REASON_TWO_SMT_CCX, REASON_TWO_CCX, REASON_ABSENT,
};

const char *probe_reason_of(const char *s) {
	for (size_t i = 0; s && i < sizeof(probe_reasons) / sizeof(probe_reasons[0]); i++)
		if (strcmp(s, probe_reasons[i]) == 0)
			return probe_reasons[i];
	return probe_reasons[REASON_ABSENT];
}

/* ---- relations between CPUs -------------------------------------------- */

static int probe_core_of(const struct topology_ccx *c, unsigned cpu) {
	for (unsigned i = 0; i < c->n_cores; i++)
		if (CPU_ISSET(cpu, &c->cores[i].pus))
			return (int)i;
	return -1;
}

/* Per-CPU CCX and core, looked up once: pair picking classifies O(n^2) pairs. */
struct probe_cpu_map {
	short ccx[CPU_SETSIZE];
	short core[CPU_SETSIZE];
};

static void probe_cpu_map_fill(const struct topology *t, struct probe_cpu_map *m) {
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		m->ccx[cpu] = m->core[cpu] = -1;
	for (unsigned i = 0; i < t->n_ccx; i++)
		for (unsigned k = 0; k < t->ccx[i].n_cores; k++)
			for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
				if (CPU_ISSET(cpu, &t->ccx[i].cores[k].pus)) {
					m->ccx[cpu] = (short)i;
					m->core[cpu] = (short)k;
				}
}

static enum probe_relation probe_classify(const struct topology *t, int ccx_a, int core_a, int ccx_b, int core_b,
					  bool same_cpu) {
	const struct topology_ccx *x = &t->ccx[ccx_a], *y = &t->ccx[ccx_b];

	if (same_cpu)
		return PROBE_SAME_CPU;
	if (ccx_a == ccx_b)
		return core_a == core_b ? PROBE_SMT : PROBE_SAME_CCX;
	/* -1 is unknown, which cannot show a difference */
	if (x->package >= 0 && y->package >= 0 && x->package != y->package)
		return PROBE_CROSS_PACKAGE;
	if (x->numa_node >= 0 && y->numa_node >= 0 && x->numa_node != y->numa_node)
		return PROBE_CROSS_NUMA;
	return PROBE_CROSS_CCX;
}

int probe_relation_of(const struct topology *t, unsigned a, unsigned b) {
	int ccx_a = topology_ccx_of_cpu(t, a), ccx_b = topology_ccx_of_cpu(t, b);

	if (ccx_a < 0 || ccx_b < 0)
		return -EINVAL;
	return (int)probe_classify(t, ccx_a, probe_core_of(&t->ccx[ccx_a], a), ccx_b,
				   probe_core_of(&t->ccx[ccx_b], b), a == b);
}

static const char *probe_pair_absent_reason(const struct topology *t, enum probe_relation r) {
	switch (r) {
	case PROBE_SAME_CPU:
		return probe_reasons[REASON_NO_CPU];
	case PROBE_SMT:
		return probe_reasons[REASON_NO_SMT];
	case PROBE_SAME_CCX:
		return probe_reasons[REASON_NO_TWO_CORES];
	case PROBE_CROSS_CCX:
		return probe_reasons[t->n_ccx < 2 ? REASON_ONE_CCX : REASON_NO_CCX_PAIR];
	case PROBE_CROSS_NUMA:
		return probe_reasons[t->n_numa < 2 ? REASON_ONE_NUMA : REASON_NO_NUMA_PAIR];
	case PROBE_CROSS_PACKAGE:
		return probe_reasons[REASON_ONE_PACKAGE];
	case PROBE_RELATION_MAX:
		break;
	}
	return probe_reasons[REASON_ABSENT];
}

void probe_pick_pairs(const struct topology *t, const cpu_set_t *usable, struct probe_pair pairs[PROBE_RELATION_MAX]) {
	struct probe_cpu_map map, *m = &map;
	unsigned cpus[CPU_SETSIZE], n = 0, found = 0;

	for (int r = 0; r < PROBE_RELATION_MAX; r++)
		pairs[r] = (struct probe_pair){ .present = false, .absent = probe_pair_absent_reason(t, r) };
	probe_cpu_map_fill(t, m);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &t->online) && (!usable || CPU_ISSET(cpu, usable)) && m->ccx[cpu] >= 0)
			cpus[n++] = cpu;
	/* Lexicographic order, so that the first pair of each relation is the
	 * lowest-numbered one and the choice is easy to predict. */
	for (unsigned i = 0; i < n && found < PROBE_RELATION_MAX; i++)
		for (unsigned j = i; j < n && found < PROBE_RELATION_MAX; j++) {
			unsigned a = cpus[i], b = cpus[j];
			enum probe_relation r = probe_classify(t, m->ccx[a], m->core[a], m->ccx[b], m->core[b], a == b);
			if (pairs[r].present)
				continue;
			pairs[r] = (struct probe_pair){ .present = true, .cpu = { a, b } };
			found++;
		}
}

/* ---- codec masks --------------------------------------------------------- */

static int probe_first_cpu(const cpu_set_t *s) {
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, s))
			return (int)c;
	return -1;
}

/* Adds the first `per_core` PUs of the first `cores` cores of c that have at
 * least `per_core` PUs. Returns false (adding nothing) when c has too few. */
static bool probe_take_cores(const struct topology_ccx *c, unsigned cores, unsigned per_core, cpu_set_t *set) {
	cpu_set_t add;
	unsigned taken = 0;

	CPU_ZERO(&add);
	for (unsigned k = 0; k < c->n_cores && taken < cores; k++) {
		unsigned got = 0;
		if ((unsigned)CPU_COUNT(&c->cores[k].pus) < per_core)
			continue;
		for (unsigned cpu = 0; cpu < CPU_SETSIZE && got < per_core; cpu++)
			if (CPU_ISSET(cpu, &c->cores[k].pus)) {
				CPU_SET(cpu, &add);
				got++;
			}
		taken++;
	}
	if (taken < cores)
		return false;
	CPU_OR(set, set, &add);
	return true;
}

static bool probe_ccx_fits(const struct topology_ccx *c, unsigned cores, unsigned per_core) {
	cpu_set_t scratch;

	CPU_ZERO(&scratch);
	return c->usable && probe_take_cores(c, cores, per_core, &scratch);
}

/* One CCX that holds `cores` cores of `per_core` PUs: the first. */
static bool probe_one_ccx(const struct topology *t, unsigned cores, unsigned per_core, cpu_set_t *set) {
	for (unsigned i = 0; i < t->n_ccx; i++)
		if (probe_ccx_fits(&t->ccx[i], cores, per_core))
			return probe_take_cores(&t->ccx[i], cores, per_core, set);
	return false;
}

/* Two CCXs that each hold them: the first pair in one NUMA node and package,
 * else in one package, else any, so that the shape measures the L3 boundary
 * and not a farther one where the machine allows. */
static bool probe_two_ccx(const struct topology *t, unsigned cores, unsigned per_core, cpu_set_t *set) {
	for (int tier = 0; tier < 3; tier++)
		for (unsigned i = 0; i < t->n_ccx; i++) {
			if (!probe_ccx_fits(&t->ccx[i], cores, per_core))
				continue;
			for (unsigned j = i + 1; j < t->n_ccx; j++) {
				const struct topology_ccx *x = &t->ccx[i], *y = &t->ccx[j];
				bool same_package = x->package == y->package;
				bool same_node = same_package && x->numa_node == y->numa_node;
				if (!probe_ccx_fits(y, cores, per_core) || (tier == 0 && !same_node) ||
				    (tier == 1 && !same_package))
					continue;
				probe_take_cores(x, cores, per_core, set);
				probe_take_cores(y, cores, per_core, set);
				return true;
			}
		}
	return false;
}

static void probe_mask_absent(struct probe_mask *m, int reason) {
	m->present = false;
	m->absent = probe_reasons[reason];
}

static bool probe_has_smt(const struct topology *t) {
	for (unsigned i = 0; i < t->n_ccx; i++)
		for (unsigned k = 0; k < t->ccx[i].n_cores; k++)
			if (CPU_COUNT(&t->ccx[i].cores[k].pus) >= 2)
				return true;
	return false;
}

int probe_codec_masks(const struct topology *t, unsigned threads, struct probe_mask masks[PROBE_PATTERN_MAX]) {
	bool smt = probe_has_smt(t);

	if (!t || threads < 1 || threads > CPU_SETSIZE)
		return -EINVAL;
	for (int p = 0; p < PROBE_PATTERN_MAX; p++) {
		masks[p] = (struct probe_mask){ .present = true };
		CPU_ZERO(&masks[p].cpus);
	}

	if (threads % 2)
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_EVEN);
	else if (!smt)
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_NO_SMT);
	else if (!probe_one_ccx(t, threads / 2, 2, &masks[PROBE_CCX_SMT_PACKED].cpus))
		probe_mask_absent(&masks[PROBE_CCX_SMT_PACKED], REASON_SMT_CORES);

	if (!probe_one_ccx(t, threads, 1, &masks[PROBE_CCX_ONE_PER_CORE].cpus))
		probe_mask_absent(&masks[PROBE_CCX_ONE_PER_CORE], REASON_CORES);

	masks[PROBE_CCX_ALL].present = false;
	masks[PROBE_CCX_ALL].absent = probe_reasons[REASON_PUS];
	for (unsigned i = 0; i < t->n_ccx; i++)
		if (t->ccx[i].usable && t->ccx[i].n_pus >= threads) {
			masks[PROBE_CCX_ALL] = (struct probe_mask){ .present = true, .cpus = t->ccx[i].cpus };
			break;
		}

	if (threads % 4)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_FOUR);
	else if (t->n_ccx < 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_ONE_CCX);
	else if (!smt)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_NO_SMT);
	else if (!probe_two_ccx(t, threads / 4, 2, &masks[PROBE_CROSS_CCX_SMT_PACKED].cpus))
		probe_mask_absent(&masks[PROBE_CROSS_CCX_SMT_PACKED], REASON_TWO_SMT_CCX);

	if (threads % 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_EVEN);
	else if (t->n_ccx < 2)
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_ONE_CCX);
	else if (!probe_two_ccx(t, threads / 2, 1, &masks[PROBE_CROSS_CCX_ONE_PER_CORE].cpus))
		probe_mask_absent(&masks[PROBE_CROSS_CCX_ONE_PER_CORE], REASON_TWO_CCX);

	masks[PROBE_MACHINE].cpus = t->online;
	if (probe_first_cpu(&t->online) < 0)
		probe_mask_absent(&masks[PROBE_MACHINE], REASON_NO_CPU);
	return 0;
}

int probe_plan(const struct topology *t, unsigned threads, const cpu_set_t *usable, struct probe_plan *ret) {
	int r;

	if (!t || !ret)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->threads = threads;
	r = probe_codec_masks(t, threads, ret->masks);
	if (r < 0)
		return r;
	probe_pick_pairs(t, usable, ret->pairs);
	return 0;
}
