/* The machine as ccxd sees it: CCXs (last-level-cache domains) made of cores
 * made of PUs, read through hwloc from the running system, an XML export or a
 * synthetic description. Loaded once into plain structs so that policy code
 * and tests never touch hwloc. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

struct topology_core {
	cpu_set_t pus;            /* its online PUs (SMT siblings) */
};

struct topology_ccx {
	unsigned index;           /* 0.., in hwloc's logical order */
	cpu_set_t cpus;           /* online PUs */
	unsigned n_cores;         /* cores with at least one online PU */
	unsigned n_pus;           /* = CPU_COUNT(&cpus) */
	struct topology_core *cores;
	unsigned cache_level;     /* 3, or the level used where there is no L3 */
	uint64_t cache_size;      /* bytes, 0 when unknown */
	int numa_node;            /* OS index of the NUMA node holding it; -1 if unknown */
	unsigned n_numa_nodes;    /* NUMA nodes it touches: more than 1 where NUMA is finer than L3 */
	int package;              /* logical index of its package; -1 if unknown */
	bool usable;              /* false when none of its PUs is online */
};

struct topology {
	char *source;             /* the spec it was loaded from */
	cpu_set_t online;         /* every online PU */
	unsigned n_packages;
	unsigned n_numa;
	unsigned n_cores;
	unsigned n_pus;
	unsigned n_ccx;
	struct topology_ccx *ccx;
};

/* spec: NULL, "" or "system" (this machine), "xml:PATH" or "synthetic:STRING".
 * For the running system the CPU sets are intersected with the kernel's online
 * CPUs; an XML or synthetic topology uses the PUs that it marks online.
 * Returns 0, or -EINVAL for a malformed spec or a topology hwloc rejects,
 * -ENOENT for a missing XML file, other -errno otherwise. On error, *error
 * (when not NULL) gets a malloc'd message for people. */
int topology_load(const char *spec, struct topology **ret, char **error);

void topology_free(struct topology *t);

/* Index of the CCX that holds cpu, or -1. */
int topology_ccx_of_cpu(const struct topology *t, unsigned cpu);
