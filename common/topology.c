#include "topology.h"

#include <errno.h>
#include <hwloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "util.h"

enum topology_source {
	TOPOLOGY_SYSTEM,
	TOPOLOGY_XML,
	TOPOLOGY_SYNTHETIC,
};

/* Stores a message for people in *error (when asked for one) and returns r,
 * so that every failure is reported and returned in one statement. */
__attribute__((format(printf, 3, 4)))
static int topology_error(char **error, int r, const char *fmt, ...) {
	va_list ap;

	if (!error)
		return r;
	va_start(ap, fmt);
	if (vasprintf(error, fmt, ap) < 0)
		*error = NULL;
	va_end(ap);
	return r;
}

static const char *topology_skip_prefix(const char *s, const char *prefix) {
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Splits spec into its kind and argument (the path or the synthetic string). */
static int topology_parse_spec(const char *spec, enum topology_source *kind, const char **arg,
			       char **error) {
	*arg = NULL;
	if (strcmp(spec, "system") == 0) {
		*kind = TOPOLOGY_SYSTEM;
		return 0;
	}
	if ((*arg = topology_skip_prefix(spec, "xml:"))) {
		*kind = TOPOLOGY_XML;
		if (!**arg)
			return topology_error(error, -EINVAL, "topology \"xml:\" names no file");
		return 0;
	}
	if ((*arg = topology_skip_prefix(spec, "synthetic:"))) {
		*kind = TOPOLOGY_SYNTHETIC;
		/* hwloc rejects it too, but without saying why. */
		if (!**arg)
			return topology_error(error, -EINVAL, "topology \"synthetic:\" has an empty description");
		return 0;
	}
	return topology_error(error, -EINVAL,
			      "unknown topology \"%s\": expected \"system\", \"xml:PATH\" or \"synthetic:STRING\"",
			      spec);
}

/* hwloc does not document its errno when it cannot use a file; checking
 * first lets the caller tell a wrong path (-ENOENT, -EACCES) from a file
 * that hwloc cannot parse (-EINVAL). */
static int topology_check_xml_file(const char *path, char **error) {
	if (access(path, R_OK) < 0) {
		int r = -errno;
		return topology_error(error, r, "topology file %s: %s", path, strerror(-r));
	}
	return 0;
}

static int topology_set_source(hwloc_topology_t topo, enum topology_source kind, const char *arg,
			       char **error) {
	int r;

	switch (kind) {
	case TOPOLOGY_SYSTEM:
		return 0;
	case TOPOLOGY_XML:
		r = topology_check_xml_file(arg, error);
		if (r < 0)
			return r;
		/* hwloc parses the file here already, so this is where garbage shows. */
		if (hwloc_topology_set_xml(topo, arg) < 0)
			return topology_error(error, -EINVAL, "topology file %s is not a valid hwloc XML export: %m",
					      arg);
		return 0;
	case TOPOLOGY_SYNTHETIC:
		if (hwloc_topology_set_synthetic(topo, arg) < 0)
			return topology_error(error, -EINVAL, "invalid synthetic topology \"%s\"", arg);
		return 0;
	}
	return -EINVAL;
}

static int topology_hwloc_load(hwloc_topology_t topo, enum topology_source kind, const char *spec,
			       char **error) {
	int e;

	if (hwloc_topology_load(topo) == 0)
		return 0;
	e = errno;
	/* A file or string that hwloc rejects is bad input; the running system
	 * failing to load is a real error worth its errno. */
	if (kind != TOPOLOGY_SYSTEM || e <= 0)
		return topology_error(error, kind == TOPOLOGY_SYSTEM ? -EIO : -EINVAL,
				      "cannot load topology \"%s\": hwloc rejected it", spec);
	return topology_error(error, -e, "cannot load topology \"%s\": %s", spec, strerror(e));
}

/* Loads the hwloc topology that spec names into *ret. */
static int topology_open_hwloc(const char *spec, hwloc_topology_t *ret, char **error) {
	enum topology_source kind = TOPOLOGY_SYSTEM;
	hwloc_topology_t topo;
	const char *arg;
	int r;

	r = topology_parse_spec(spec, &kind, &arg, error);
	if (r < 0)
		return r;
	if (hwloc_topology_init(&topo) < 0)
		return topology_error(error, -ENOMEM, "cannot initialise hwloc: %m");
	/* The daemon's own cgroup cpuset must not hide CPUs that the processes it
	 * places may run on; offline CPUs stay out of hwloc's cpusets regardless. */
	r = hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	if (r < 0)
		r = topology_error(error, -EINVAL, "cannot set hwloc flags: %m");
	if (r >= 0)
		r = topology_set_source(topo, kind, arg, error);
	if (r >= 0)
		r = topology_hwloc_load(topo, kind, spec, error);
	if (r < 0) {
		hwloc_topology_destroy(topo);
		return r;
	}
	*ret = topo;
	return 0;
}

/* PUs are numbered by their OS index, as sched_setaffinity numbers CPUs.
 * PUs >= CPU_SETSIZE (1024) cannot be expressed in a cpu_set_t, the CPU set
 * that all of ccxd uses, so they are left out: such CPUs are invisible to
 * ccxd (it neither counts nor places on them). */
static void topology_bitmap_to_cpuset(hwloc_const_bitmap_t b, cpu_set_t *set) {
	CPU_ZERO(set);
	for (int i = hwloc_bitmap_first(b); i >= 0 && i < CPU_SETSIZE; i = hwloc_bitmap_next(b, i))
		CPU_SET(i, set);
}

/* The online PUs of obj that ccxd can use; returns how many. */
static unsigned topology_obj_cpus(hwloc_obj_t obj, const cpu_set_t *online, cpu_set_t *ret) {
	topology_bitmap_to_cpuset(obj->cpuset, ret);
	CPU_AND(ret, ret, online);
	return (unsigned)CPU_COUNT(ret);
}

/* Some topologies (synthetic ones, some firmware) have no Core objects:
 * then each PU stands for its own core. */
static hwloc_obj_type_t topology_core_type(hwloc_topology_t topo) {
	return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

/* true when some object of this cache type holds more than one core */
static bool topology_cache_is_shared(hwloc_topology_t topo, hwloc_obj_type_t type) {
	hwloc_obj_type_t core = topology_core_type(topo);
	hwloc_obj_t obj = NULL;

	while ((obj = hwloc_get_next_obj_by_type(topo, type, obj)))
		if (hwloc_get_nbobjs_inside_cpuset_by_type(topo, obj->cpuset, core) > 1)
			return true;
	return false;
}

/* Which objects are the CCXs: the L3 caches; on machines without L3, the
 * highest cache that cores share (what they exchange data through); without
 * any shared cache, the packages; without packages, the whole machine. */
static hwloc_obj_type_t topology_ccx_type(hwloc_topology_t topo) {
	static const hwloc_obj_type_t lower_caches[] = { HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE };

	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE) > 0)
		return HWLOC_OBJ_L3CACHE;
	for (size_t i = 0; i < sizeof(lower_caches) / sizeof(lower_caches[0]); i++)
		if (topology_cache_is_shared(topo, lower_caches[i]))
			return lower_caches[i];
	if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) > 0)
		return HWLOC_OBJ_PACKAGE;
	return HWLOC_OBJ_MACHINE;
}

/* Counts the cores that have at least one usable online PU. */
static unsigned topology_count_cores(hwloc_topology_t topo, hwloc_obj_t within, const cpu_set_t *online) {
	hwloc_obj_type_t type = topology_core_type(topo);
	hwloc_obj_t core = NULL;
	unsigned n = 0;
	cpu_set_t pus;

	while ((core = hwloc_get_next_obj_inside_cpuset_by_type(topo, within->cpuset, type, core)))
		if (topology_obj_cpus(core, online, &pus) > 0)
			n++;
	return n;
}

static int topology_ccx_fill_cores(hwloc_topology_t topo, hwloc_obj_t obj, struct topology_ccx *c) {
	hwloc_obj_type_t type = topology_core_type(topo);
	unsigned max = topology_count_cores(topo, obj, &c->cpus);
	hwloc_obj_t core = NULL;

	c->n_cores = 0;
	c->cores = NULL;
	if (max == 0)
		return 0;
	c->cores = calloc(max, sizeof(c->cores[0]));
	if (!c->cores)
		return -ENOMEM;
	while ((core = hwloc_get_next_obj_inside_cpuset_by_type(topo, obj->cpuset, type, core)) &&
	       c->n_cores < max)
		if (topology_obj_cpus(core, &c->cpus, &c->cores[c->n_cores].pus) > 0)
			c->n_cores++;
	return 0;
}

/* Whether any NUMA node says how much memory it has: exports made from
 * CPUID alone (hwloc's x86 backend) say nothing, and then a node's 0 bytes
 * mean "unknown", not "none". */
static bool topology_memory_known(hwloc_topology_t topo) {
	hwloc_obj_t node = NULL;

	while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)))
		if (node->attr && node->attr->numanode.local_memory > 0)
			return true;
	return false;
}

/* The NUMA nodes whose CPUs overlap the CCX: usually the one node that holds
 * it, several where NUMA is finer than L3 (Intel SNC), none where the local
 * node has no memory and hwloc therefore shows none (Linux's hwloc leaves
 * memoryless nodes out: a Threadripper 2990WX's compute-only dies, or a
 * 1900X with DIMMs on one die only). A node that hwloc keeps but that has
 * no memory while others have some (older exports) counts as none too. */
static void topology_ccx_find_numa(hwloc_topology_t topo, hwloc_obj_t obj, struct topology_ccx *c) {
	bool known = topology_memory_known(topo), memory = false;
	hwloc_obj_t node = NULL;

	c->numa_node = -1;
	c->n_numa_nodes = 0;
	while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node))) {
		if (!hwloc_bitmap_intersects(node->cpuset, obj->cpuset))
			continue;
		if (c->n_numa_nodes++ == 0)
			c->numa_node = (int)node->os_index;
		if (!known || (node->attr && node->attr->numanode.local_memory > 0))
			memory = true;
	}
	c->no_local_memory = !memory;
}

static int topology_package_of(hwloc_topology_t topo, hwloc_obj_t obj) {
	hwloc_obj_t pkg = obj->type == HWLOC_OBJ_PACKAGE ? obj
		: hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj);

	return pkg ? (int)pkg->logical_index : -1;
}

static int topology_ccx_fill(hwloc_topology_t topo, hwloc_obj_t obj, unsigned index,
			     const cpu_set_t *online, struct topology_ccx *c) {
	c->index = index;
	c->n_pus = topology_obj_cpus(obj, online, &c->cpus);
	c->usable = c->n_pus > 0;
	c->cache_level = hwloc_obj_type_is_cache(obj->type) ? obj->attr->cache.depth : 0;
	c->cache_size = hwloc_obj_type_is_cache(obj->type) ? obj->attr->cache.size : 0;
	c->package = topology_package_of(topo, obj);
	topology_ccx_find_numa(topo, obj, c);
	return topology_ccx_fill_cores(topo, obj, c);
}

static int topology_fill_ccxs(hwloc_topology_t topo, struct topology *t) {
	hwloc_obj_type_t type = topology_ccx_type(topo);
	int n = hwloc_get_nbobjs_by_type(topo, type);

	if (n <= 0)
		return -EINVAL;
	t->ccx = calloc((size_t)n, sizeof(t->ccx[0]));
	if (!t->ccx)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		/* n_ccx grows one at a time so that topology_free frees exactly
		 * what was filled if a later allocation fails. */
		int r = topology_ccx_fill(topo, hwloc_get_obj_by_type(topo, type, (unsigned)i), (unsigned)i,
					  &t->online, &t->ccx[i]);
		t->n_ccx++;
		if (r < 0)
			return r;
	}
	return 0;
}

static unsigned topology_count_type(hwloc_topology_t topo, hwloc_obj_type_t type) {
	int n = hwloc_get_nbobjs_by_type(topo, type);

	return n > 0 ? (unsigned)n : 0;
}

/* A CPU kind's FrequencyMaxMHz in kHz, 0 when it has none or it is not a number. */
static uint64_t topology_kind_khz(const struct hwloc_info_s *infos, unsigned n) {
	for (unsigned i = 0; i < n; i++) {
		char *end;
		unsigned long long mhz;
		if (!infos[i].name || !infos[i].value || strcmp(infos[i].name, "FrequencyMaxMHz") != 0)
			continue;
		errno = 0;
		mhz = strtoull(infos[i].value, &end, 10);
		if (errno || end == infos[i].value || *end || mhz == 0 || mhz > UINT64_MAX / 1000)
			return 0;
		return mhz * 1000;
	}
	return 0;
}

/* The highest efficiency hwloc gives any kind, or -1 when it ranks none
 * (efficiency unknown for some kind). */
static int topology_best_efficiency(hwloc_topology_t topo, int n) {
	int best = -1;

	for (int k = 0; k < n; k++) {
		int eff = -1;
		if (hwloc_cpukinds_get_info(topo, (unsigned)k, NULL, &eff, NULL, NULL, 0) < 0 || eff < 0)
			return -1;
		if (eff > best)
			best = eff;
	}
	return best;
}

/* What hwloc's CPU kinds (hybrid parts: P- and E-cores, big.LITTLE; and
 * any machine whose cores' top clocks differ) say of each CCX: the highest
 * FrequencyMaxMHz of its PUs' kinds, the highest efficiency rank, and
 * whether all its PUs are of a kind below the best (efficiency cores). */
static void topology_read_kinds(hwloc_topology_t topo, struct topology *t) {
	int n = hwloc_cpukinds_get_nr(topo, 0), best = topology_best_efficiency(topo, n > 0 ? n : 0);
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	unsigned *lesser = calloc(t->n_ccx ? t->n_ccx : 1, sizeof(*lesser));

	for (int k = 0; set && lesser && k < n; k++) {
		struct hwloc_info_s *infos = NULL;
		unsigned n_infos = 0;
		int eff = -1;
		uint64_t khz;
		cpu_set_t kind;
		if (hwloc_cpukinds_get_info(topo, (unsigned)k, set, &eff, &n_infos, &infos, 0) < 0)
			continue;
		khz = topology_kind_khz(infos, n_infos);
		topology_bitmap_to_cpuset(set, &kind);
		for (unsigned c = 0; c < t->n_ccx; c++) {
			struct topology_ccx *x = &t->ccx[c];
			cpu_set_t both;
			CPU_AND(&both, &kind, &x->cpus);
			if (CPU_COUNT(&both) == 0)
				continue;
			if (khz > x->clocks[TOPOLOGY_CLOCK_KINDS])
				x->clocks[TOPOLOGY_CLOCK_KINDS] = khz;
			if (best >= 0 && (uint64_t)eff + 1 > x->clocks[TOPOLOGY_CLOCK_EFFICIENCY])
				x->clocks[TOPOLOGY_CLOCK_EFFICIENCY] = (uint64_t)eff + 1;
			if (best >= 0 && eff < best)
				lesser[c] += (unsigned)CPU_COUNT(&both);
		}
	}
	for (unsigned c = 0; lesser && c < t->n_ccx; c++)
		t->ccx[c].efficiency_cores = t->ccx[c].n_pus > 0 && lesser[c] == t->ccx[c].n_pus;
	free(lesser);
	hwloc_bitmap_free(set);
}

/* Copies what ccxd needs out of topo into plain data. */
static int topology_from_hwloc(hwloc_topology_t topo, const char *source, struct topology **ret) {
	struct topology *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->source = strdup(source);
	if (!t->source) {
		topology_free(t);
		return -ENOMEM;
	}
	/* With INCLUDE_DISALLOWED, the topology cpuset is exactly the online PUs
	 * (hwloc keeps offline ones in complete_cpuset only). */
	topology_bitmap_to_cpuset(hwloc_topology_get_topology_cpuset(topo), &t->online);
	t->n_pus = (unsigned)CPU_COUNT(&t->online);
	t->n_cores = topology_count_cores(topo, hwloc_get_root_obj(topo), &t->online);
	t->n_packages = topology_count_type(topo, HWLOC_OBJ_PACKAGE);
	t->n_numa = topology_count_type(topo, HWLOC_OBJ_NUMANODE);
	t->llc_balancing = -1;
	r = topology_fill_ccxs(topo, t);
	if (r < 0) {
		topology_free(t);
		return r;
	}
	topology_read_kinds(topo, t);
	topology_pick_clocks(t);
	*ret = t;
	return 0;
}

int topology_load(const char *spec, struct topology **ret, char **error) {
	return topology_load_at(spec, "", ret, error);
}

int topology_load_at(const char *spec, const char *root, struct topology **ret, char **error) {
	const char *source = spec && *spec ? spec : "system";
	hwloc_topology_t topo = NULL;
	struct topology *t = NULL;
	int r;

	*ret = NULL;
	if (error)
		*error = NULL;
	r = topology_open_hwloc(source, &topo, error);
	if (r < 0)
		return r;
	r = topology_from_hwloc(topo, source, &t);
	hwloc_topology_destroy(topo);
	if (r < 0)
		return topology_error(error, r, "cannot read topology \"%s\": %s", source, strerror(-r));
	/* Only the running system's /sys describes the topology loaded. */
	if (strcmp(source, "system") == 0)
		topology_read_system(t, root ? root : "");
	*ret = t;
	return 0;
}

void topology_free(struct topology *t) {
	if (!t)
		return;
	for (unsigned i = 0; i < t->n_ccx; i++)
		free(t->ccx[i].cores);
	free(t->ccx);
	free(t->source);
	free(t);
}

int topology_ccx_of_cpu(const struct topology *t, unsigned cpu) {
	if (!t || cpu >= CPU_SETSIZE)
		return -1;
	for (unsigned i = 0; i < t->n_ccx; i++)
		if (CPU_ISSET(cpu, &t->ccx[i].cpus))
			return (int)i;
	return -1;
}

static const char *const clock_names[] = {
	[TOPOLOGY_CLOCK_NONE] = "none",
	[TOPOLOGY_CLOCK_CPUFREQ] = "cpufreq",
	[TOPOLOGY_CLOCK_CPPC] = "cppc",
	[TOPOLOGY_CLOCK_KINDS] = "cpukinds",
	[TOPOLOGY_CLOCK_EFFICIENCY] = "efficiency",
};

const char *topology_clock_to_string(enum topology_clock c) {
	return NAME_OF(clock_names, c);
}

/* Every usable CCX has a figure from source; *differ: not all the same. */
static bool topology_clocks_complete(const struct topology *t, enum topology_clock source, bool *differ) {
	uint64_t first = 0;
	bool any = false;

	*differ = false;
	for (unsigned c = 0; c < t->n_ccx; c++) {
		uint64_t v = t->ccx[c].clocks[source];
		if (!t->ccx[c].usable)
			continue;
		if (v == 0)
			return false;
		if (any && v != first)
			*differ = true;
		if (!any)
			first = v;
		any = true;
	}
	return any;
}

void topology_pick_clocks(struct topology *t) {
	enum topology_clock pick = TOPOLOGY_CLOCK_NONE;

	/* A source that sees every CCX alike may only be blind to what tells
	 * them apart (a driver that reports one top clock for all cores):
	 * the next one may know better. */
	for (int s = TOPOLOGY_CLOCK_NONE + 1; s < _TOPOLOGY_CLOCK_MAX; s++) {
		bool differ;
		if (!topology_clocks_complete(t, (enum topology_clock)s, &differ))
			continue;
		if (differ) {
			pick = (enum topology_clock)s;
			break;
		}
		if (pick == TOPOLOGY_CLOCK_NONE)
			pick = (enum topology_clock)s;
	}
	t->clock_source = pick;
	for (unsigned c = 0; c < t->n_ccx; c++)
		t->ccx[c].clock = pick == TOPOLOGY_CLOCK_NONE ? 0 : t->ccx[c].clocks[pick];
}

bool topology_clocks_differ(const struct topology *t) {
	bool differ = false;

	return t->clock_source != TOPOLOGY_CLOCK_NONE && topology_clocks_complete(t, t->clock_source, &differ) &&
	       differ;
}

/* The highest figure read(root, cpu) gives among the CCX's CPUs, 0 when
 * some CPU has none (a partial reading would favour the CCXs it covers). */
static uint64_t topology_ccx_sysfs_max(const struct topology_ccx *x, const char *root,
				       int (*read)(const char *root, unsigned cpu, uint64_t *ret)) {
	uint64_t best = 0;

	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		uint64_t v;
		if (!CPU_ISSET(cpu, &x->cpus))
			continue;
		if (read(root, cpu, &v) < 0)
			return 0;
		if (v > best)
			best = v;
	}
	return best;
}

void topology_read_system(struct topology *t, const char *root) {
	char mode[SYSFS_X3D_MODE_MAX];

	t->x3d_mode[0] = '\0';
	if (sysfs_read_x3d_mode(root, mode) == 0)
		snprintf(t->x3d_mode, sizeof(t->x3d_mode), "%s", mode);
	for (unsigned c = 0; c < t->n_ccx; c++) {
		t->ccx[c].clocks[TOPOLOGY_CLOCK_CPUFREQ] = topology_ccx_sysfs_max(&t->ccx[c], root, sysfs_read_cpu_max_khz);
		/* Where amd_x3d_vcache is bound, CPPC's highest_perf is the
		 * ranking that its mode sets (cache mode ranks the V-Cache
		 * die first), not what the cores reach: no clock. */
		t->ccx[c].clocks[TOPOLOGY_CLOCK_CPPC] =
			t->x3d_mode[0] ? 0 : topology_ccx_sysfs_max(&t->ccx[c], root, sysfs_read_cpu_highest_perf);
	}
	topology_pick_clocks(t);
	t->llc_balancing = sysfs_read_llc_balancing(root);
	if (t->llc_balancing < 0)
		t->llc_balancing = -1;
}
