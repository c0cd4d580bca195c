/* The machine as ccxd sees it: CCXs (last-level-cache domains) made of cores
 * made of PUs, read through hwloc from the running system, an XML export or a
 * synthetic description. Loaded once into plain structs so that policy code
 * and tests never touch hwloc. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* Where the clocks of the CCXs come from, in the order they are looked for:
 * on the running system cpufreq, then ACPI CPPC, then hwloc's CPU kinds;
 * for another machine's topology (XML) only its CPU kinds, since this
 * machine's /sys says nothing of it. */
enum topology_clock {
	TOPOLOGY_CLOCK_NONE,       /* nothing known */
	TOPOLOGY_CLOCK_CPUFREQ,    /* cpufreq's cpuinfo_max_freq, kHz */
	TOPOLOGY_CLOCK_CPPC,       /* ACPI CPPC's highest_perf, in its own unit */
	TOPOLOGY_CLOCK_KINDS,      /* hwloc's CPU kinds' FrequencyMaxMHz, in kHz */
	TOPOLOGY_CLOCK_EFFICIENCY, /* hwloc's ranking of its CPU kinds, 1 the least powerful */
	_TOPOLOGY_CLOCK_MAX,
};

const char *topology_clock_to_string(enum topology_clock c);

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
	bool no_local_memory;     /* its NUMA node has no memory (all of it is another node's) */
	bool efficiency_cores;    /* all its PUs are of a CPU kind less powerful than the best one */
	uint64_t clock;           /* the highest clock of its cores, in t->clock_source's unit; 0 unknown */
	uint64_t clocks[_TOPOLOGY_CLOCK_MAX];  /* that figure from each source; 0 where it says nothing */
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
	enum topology_clock clock_source;  /* which source t->ccx[].clock comes from */
	/* The running system's state (never another machine's topology): */
	char x3d_mode[16];        /* amd_x3d_vcache's mode: "cache", "frequency"; "" without the driver */
	int llc_balancing;        /* the kernel's cache-aware balancing: 1 on, 0 off, -1 not there or not known */
};

/* spec: NULL, "" or "system" (this machine), "xml:PATH" or "synthetic:STRING".
 * For the running system the CPU sets are intersected with the kernel's online
 * CPUs; an XML or synthetic topology uses the PUs that it marks online.
 * Returns 0, or -EINVAL for a malformed spec or a topology hwloc rejects,
 * -ENOENT for a missing XML file, other -errno otherwise. On error, *error
 * (when not NULL) gets a malloc'd message for people. */
int topology_load(const char *spec, struct topology **ret, char **error);

/* The same, with the file-system root whose /sys describes the running
 * system ("" for the real one; tests give a fixture tree). It is read only
 * when spec is the running system. */
int topology_load_at(const char *spec, const char *root, struct topology **ret, char **error);

/* Reads what /sys under root says of the machine t is: each CCX's clock
 * (cpufreq, else CPPC), the X3D mode, the cache-aware balancing; then picks
 * the clocks' source. topology_load_at() calls it for the running system;
 * tests call it on other machines' topologies with fixture trees. */
void topology_read_system(struct topology *t, const char *root);

/* Picks t->clock_source and each CCX's clock from ccx[].clocks: the first
 * source, in enum order, that knows every usable CCX and tells two apart;
 * else the first that knows every one (all alike); else none. */
void topology_pick_clocks(struct topology *t);

/* true when the CCXs' clocks are known and some are higher than others. */
bool topology_clocks_differ(const struct topology *t);

void topology_free(struct topology *t);

/* Index of the CCX that holds cpu, or -1. */
int topology_ccx_of_cpu(const struct topology *t, unsigned cpu);
