#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <hwloc.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpulist.h"
#include "fixture.h"
#include "test.h"
#include "topologies.h"
#include "topology.h"

#define MIB (UINT64_C(1024) * 1024)

/* The three strings of synthetic.txt in the topologies directory. */
#define SYNTHETIC_1800X "synthetic:pack:1 l3:2(size=8MiB) l2:4(size=512KiB) l1d:1(size=32KiB) core:1 " \
	"pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)"
#define SYNTHETIC_1950X_NUMA "synthetic:pack:1 numa:2(memory=16GiB) l3:2(size=8MiB) l2:4(size=512KiB) " \
	"l1d:1(size=32KiB) core:1 pu:2(indexes=0,16,1,17,2,18,3,19,4,20,5,21,6,22,7,23,8,24,9,25,10,26," \
	"11,27,12,28,13,29,14,30,15,31)"
#define SYNTHETIC_2CPU "synthetic:pack:1 l3:2 core:1 pu:1"

/* The table of topologies/README.md. ccx0 and core0 are the PUs of the first
 * L3 and of core 0, as its notes column gives them (or as follows directly
 * from it, e.g. the one L3 of a single-L3 machine); NULL where it says nothing. */
struct machine {
	const char *file;
	unsigned packages, numa, l3, cores, pus;
	unsigned l3_mib[2];       /* L3 of CCX 0, L3 of every other CCX */
	const char *ccx0;
	const char *core0;
};

static const struct machine machines[] = {
	{ "amd-ryzen7-1800x.xml", 1, 1, 2, 8, 16, { 8, 8 }, "0-3,8-11", "0,8" },
	{ "amd-ryzen7-5800x.xml", 1, 1, 1, 8, 16, { 32, 32 }, "0-15", "0,8" },
	{ "amd-ryzen9-3950x.xml", 1, 1, 4, 16, 32, { 16, 16 }, "0-3,16-19", "0,16" },
	{ "amd-ryzen9-5900x.xml", 1, 1, 2, 12, 24, { 32, 32 }, "0-5,12-17", "0,12" },
	{ "amd-ryzen9-7950x.xml", 1, 1, 2, 16, 32, { 32, 32 }, "0-7,16-23", "0,16" },
	{ "amd-ryzen9-7950x3d.xml", 1, 1, 2, 16, 32, { 96, 32 }, "0-7,16-23", "0,16" },
	{ "amd-threadripper-1900x-numa.xml", 1, 1, 2, 8, 16, { 8, 8 }, "0-3,8-11", "0,8" },
	{ "amd-threadripper-1950x.xml", 1, 1, 4, 16, 32, { 8, 8 }, "0-3,16-19", "0,16" },
	{ "amd-threadripper-1950x-numa.xml", 1, 2, 4, 16, 32, { 8, 8 }, "0-3,16-19", "0,16" },
	{ "amd-epyc-7551-2s.xml", 2, 8, 16, 64, 128, { 8, 8 }, "0-3,64-67", "0,64" },
	{ "amd-epyc-7402-2s.xml", 2, 2, 16, 48, 96, { 16, 16 }, "0-2,48-50", "0,48" },
	{ "amd-epyc-7a53-nps4.xml", 1, 4, 8, 64, 128, { 32, 32 }, "0-7,64-71", "0,64" },
	{ "amd-epyc-7742-2s.xml", 2, 2, 32, 128, 256, { 16, 16 }, "0-3,128-131", "0,128" },
	{ "amd-epyc-7763-2s.xml", 2, 2, 16, 128, 128, { 32, 32 }, "0-7", "0" },
	{ "intel-xeon-e5-2695v4-2s.xml", 2, 2, 2, 36, 72, { 45, 45 }, "0-17,36-53", "0,36" },
	{ "intel-xeon-8480-2s-snc4.xml", 2, 8, 2, 112, 224, { 105, 105 }, NULL, "0,112" },
	{ "intel-core-i7-7600u.xml", 1, 1, 1, 2, 4, { 4, 4 }, "0-3", "0,2" },
	{ "intel-core-i7-1370p-hybrid.xml", 1, 1, 1, 14, 20, { 24, 24 }, "0-19", "0-1" },
	{ "arm-kunpeng920-2s.xml", 2, 4, 4, 128, 128, { 32, 32 }, "0-31", "0" },
	{ "ibm-power9-2s.xml", 2, 2, 20, 40, 160, { 10, 10 }, "8-15", NULL },
};

#define N_MACHINES (sizeof(machines) / sizeof(machines[0]))

/* Names the machine after the checks that failed on it (test_failed is sticky). */
static void name_failures(const char *file, int failed_before) {
	if (test_failed && !failed_before)
		printf("# ^ in %s\n", file);
}

static const char *fmt(const cpu_set_t *set) {
	static char buf[CPULIST_MAX];

	return cpulist_format(set, buf, sizeof(buf));
}

/* What every loaded topology must satisfy, whatever machine it describes:
 * the CCXs split the online PUs, and their cores split each CCX. */
static void check_consistent(const struct topology *t) {
	cpu_set_t seen;
	unsigned cores = 0;

	CPU_ZERO(&seen);
	CHECK(t->n_ccx > 0);
	CHECK_INT(CPU_COUNT(&t->online), t->n_pus);
	for (unsigned i = 0; i < t->n_ccx; i++) {
		const struct topology_ccx *c = &t->ccx[i];
		cpu_set_t in_cores, overlap;

		CHECK_INT(c->index, i);
		CHECK_INT(CPU_COUNT(&c->cpus), c->n_pus);
		CHECK_INT(c->usable, c->n_pus > 0);
		CHECK(cpulist_is_subset(&c->cpus, &t->online));
		CPU_AND(&overlap, &seen, &c->cpus);
		CHECK_INT(CPU_COUNT(&overlap), 0);
		CPU_OR(&seen, &seen, &c->cpus);
		CPU_ZERO(&in_cores);
		for (unsigned k = 0; k < c->n_cores; k++) {
			CHECK(CPU_COUNT(&c->cores[k].pus) > 0);
			CHECK(cpulist_is_subset(&c->cores[k].pus, &c->cpus));
			CPU_OR(&in_cores, &in_cores, &c->cores[k].pus);
		}
		CHECK(CPU_EQUAL(&in_cores, &c->cpus));
		cores += c->n_cores;
	}
	CHECK(CPU_EQUAL(&seen, &t->online));
	CHECK_INT(cores, t->n_cores);
}

static void readme_machines_have_readme_counts(void) {
	for (size_t i = 0; i < N_MACHINES; i++) {
		const struct machine *m = &machines[i];
		int failed_before = test_failed;
		struct topology *t = test_topology_file(m->file);

		if (!t)
			continue;
		CHECK_INT(t->n_packages, m->packages);
		CHECK_INT(t->n_numa, m->numa);
		CHECK_INT(t->n_ccx, m->l3);
		CHECK_INT(t->n_cores, m->cores);
		CHECK_INT(t->n_pus, m->pus);
		check_consistent(t);
		name_failures(m->file, failed_before);
		topology_free(t);
	}
}

static void readme_machines_have_readme_l3_sizes(void) {
	for (size_t i = 0; i < N_MACHINES; i++) {
		const struct machine *m = &machines[i];
		int failed_before = test_failed;
		struct topology *t = test_topology_file(m->file);

		if (!t)
			continue;
		for (unsigned k = 0; k < t->n_ccx; k++) {
			CHECK_INT(t->ccx[k].cache_level, 3);
			CHECK_INT(t->ccx[k].cache_size, m->l3_mib[k ? 1 : 0] * MIB);
		}
		name_failures(m->file, failed_before);
		topology_free(t);
	}
}

static void readme_machines_have_readme_pu_numbering(void) {
	for (size_t i = 0; i < N_MACHINES; i++) {
		const struct machine *m = &machines[i];
		int failed_before = test_failed;
		struct topology *t = test_topology_file(m->file);

		if (!t)
			continue;
		if (m->ccx0)
			CHECK_STR(fmt(&t->ccx[0].cpus), m->ccx0);
		if (m->core0 && t->ccx[0].n_cores > 0)
			CHECK_STR(fmt(&t->ccx[0].cores[0].pus), m->core0);
		name_failures(m->file, failed_before);
		topology_free(t);
	}
}

static void unequal_l3_sizes_on_7950x3d(void) {
	struct topology *t = test_topology_file("amd-ryzen9-7950x3d.xml");

	if (!t)
		return;
	CHECK_INT(t->n_ccx, 2);
	CHECK_INT(t->ccx[0].cache_size, 96 * MIB);
	CHECK_INT(t->ccx[1].cache_size, 32 * MIB);
	CHECK_INT(t->ccx[0].n_cores, t->ccx[1].n_cores);
	CHECK_STR(fmt(&t->ccx[1].cpus), "8-15,24-31");
	topology_free(t);
}

static bool is_listed(const char *file) {
	for (size_t i = 0; i < N_MACHINES; i++)
		if (strcmp(machines[i].file, file) == 0)
			return true;
	return false;
}

static bool has_xml_suffix(const char *name) {
	size_t n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".xml") == 0;
}

/* So that a file added to the directory is at least loaded and checked. */
static void every_xml_file_loads(void) {
	const char *dir = TEST_TOPOLOGIES_DIR;
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	CHECK(d);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct topology *t;

		if (!has_xml_suffix(de->d_name))
			continue;
		if (!is_listed(de->d_name))
			printf("# %s is not in the README table of this test\n", de->d_name);
		t = test_topology_file(de->d_name);
		if (t)
			check_consistent(t);
		topology_free(t);
		n++;
	}
	closedir(d);
	CHECK(n >= N_MACHINES);
}

static void synthetic_1800x_has_two_ccx_with_linux_numbering(void) {
	struct topology *t = test_topology(SYNTHETIC_1800X);

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_ccx, 2);
	CHECK_INT(t->n_pus, 16);
	CHECK_INT(t->n_cores, 8);
	CHECK_STR(fmt(&t->ccx[0].cpus), "0-3,8-11");
	CHECK_STR(fmt(&t->ccx[1].cpus), "4-7,12-15");
	CHECK_STR(fmt(&t->ccx[0].cores[0].pus), "0,8");
	CHECK_INT(t->ccx[0].cache_size, 8 * MIB);
	topology_free(t);
}

static void synthetic_1950x_numa_has_two_ccx_per_node(void) {
	static const int node_of_ccx[] = { 0, 0, 1, 1 };
	struct topology *t = test_topology(SYNTHETIC_1950X_NUMA);

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_numa, 2);
	CHECK_INT(t->n_ccx, 4);
	CHECK_INT(t->n_pus, 32);
	CHECK_STR(fmt(&t->ccx[0].cpus), "0-3,16-19");
	CHECK_STR(fmt(&t->ccx[1].cpus), "4-7,20-23");
	for (unsigned i = 0; i < t->n_ccx && i < 4; i++) {
		CHECK_INT(t->ccx[i].numa_node, node_of_ccx[i]);
		CHECK_INT(t->ccx[i].n_numa_nodes, 1);
	}
	topology_free(t);
}

static void synthetic_2cpu_splits_into_two_ccx(void) {
	struct topology *t = test_topology(SYNTHETIC_2CPU);

	if (!t)
		return;
	check_consistent(t);
	CHECK_STR(t->source, SYNTHETIC_2CPU);
	CHECK_INT(t->n_ccx, 2);
	CHECK_INT(t->n_pus, 2);
	CHECK_STR(fmt(&t->ccx[0].cpus), "0");
	CHECK_STR(fmt(&t->ccx[1].cpus), "1");
	CHECK_INT(t->ccx[0].cache_level, 3);
	CHECK_INT(t->ccx[1].n_cores, 1);
	topology_free(t);
}

static void shared_l2_is_the_ccx_without_l3(void) {
	struct topology *t = test_topology("synthetic:pack:1 l2:2(size=2MiB) core:4 pu:1");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_ccx, 2);
	CHECK_INT(t->ccx[0].cache_level, 2);
	CHECK_INT(t->ccx[0].cache_size, 2 * MIB);
	CHECK_INT(t->ccx[0].n_cores, 4);
	CHECK_STR(fmt(&t->ccx[0].cpus), "0-3");
	CHECK_STR(fmt(&t->ccx[1].cpus), "4-7");
	topology_free(t);
}

static void package_is_the_ccx_without_shared_cache(void) {
	struct topology *t = test_topology("synthetic:pack:2 core:2 pu:2");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_ccx, 2);
	for (unsigned i = 0; i < t->n_ccx; i++) {
		CHECK_INT(t->ccx[i].cache_level, 0);
		CHECK_INT(t->ccx[i].cache_size, 0);
		CHECK_INT(t->ccx[i].package, i);
		CHECK_INT(t->ccx[i].n_cores, 2);
	}
	CHECK_STR(fmt(&t->ccx[0].cpus), "0-3");
	CHECK_STR(fmt(&t->ccx[1].cpus), "4-7");
	CHECK_STR(fmt(&t->ccx[1].cores[0].pus), "4-5");
	topology_free(t);
}

static void private_l2_does_not_make_a_ccx(void) {
	struct topology *t = test_topology("synthetic:pack:1 l2:4 core:1 pu:2");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_ccx, 1);
	CHECK_INT(t->ccx[0].cache_level, 0);
	CHECK_INT(t->ccx[0].n_cores, 4);
	topology_free(t);
}

static void machine_is_the_ccx_without_packages(void) {
	struct topology *t = test_topology("synthetic:core:2 pu:2");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_packages, 0);
	CHECK_INT(t->n_ccx, 1);
	CHECK_INT(t->ccx[0].package, -1);
	CHECK_STR(fmt(&t->ccx[0].cpus), "0-3");
	topology_free(t);
}

static void pus_stand_for_cores_without_cores(void) {
	struct topology *t = test_topology("synthetic:pack:1 l3:2 pu:2");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_cores, 4);
	CHECK_INT(t->ccx[0].n_cores, 2);
	CHECK_STR(fmt(&t->ccx[0].cores[1].pus), "1");
	topology_free(t);
}

/* cpu_set_t ends at CPU_SETSIZE; a CCX made only of PUs beyond it is unusable. */
static void pus_beyond_cpu_setsize_are_left_out(void) {
	struct topology *t = test_topology("synthetic:pack:3 core:512 pu:1");

	if (!t)
		return;
	check_consistent(t);
	CHECK_INT(t->n_pus, CPU_SETSIZE);
	CHECK_INT(t->n_cores, CPU_SETSIZE);
	CHECK_INT(t->n_ccx, 3);
	CHECK(t->ccx[1].usable);
	CHECK(!t->ccx[2].usable);
	CHECK_INT(t->ccx[2].n_pus, 0);
	CHECK_INT(t->ccx[2].n_cores, 0);
	topology_free(t);
}

static void threadripper_1950x_numa_nodes_and_packages(void) {
	static const int node_of_ccx[] = { 0, 0, 1, 1 };
	struct topology *t = test_topology_file("amd-threadripper-1950x-numa.xml");

	if (!t)
		return;
	CHECK_INT(t->n_ccx, 4);
	for (unsigned i = 0; i < t->n_ccx && i < 4; i++) {
		CHECK_INT(t->ccx[i].numa_node, node_of_ccx[i]);
		CHECK_INT(t->ccx[i].n_numa_nodes, 1);
		CHECK_INT(t->ccx[i].package, 0);
	}
	topology_free(t);
}

/* Only die 0 has memory, so hwloc shows one NUMA node, attached to L3#0:
 * the CPUs of L3#1 have no node of their own. */
static void threadripper_1900x_second_ccx_has_no_numa_node(void) {
	struct topology *t = test_topology_file("amd-threadripper-1900x-numa.xml");

	if (!t)
		return;
	CHECK_INT(t->n_numa, 1);
	CHECK_INT(t->ccx[0].numa_node, 0);
	CHECK_INT(t->ccx[0].n_numa_nodes, 1);
	CHECK_INT(t->ccx[1].numa_node, -1);
	CHECK_INT(t->ccx[1].n_numa_nodes, 0);
	topology_free(t);
}

/* 2 sockets x 4 NUMA nodes (one per die) x 2 CCX */
static void epyc_7551_two_ccx_per_numa_node(void) {
	struct topology *t = test_topology_file("amd-epyc-7551-2s.xml");

	if (!t)
		return;
	CHECK_INT(t->n_ccx, 16);
	for (unsigned i = 0; i < t->n_ccx; i++) {
		CHECK_INT(t->ccx[i].numa_node, i / 2);
		CHECK_INT(t->ccx[i].n_numa_nodes, 1);
		CHECK_INT(t->ccx[i].package, i / 8);
	}
	topology_free(t);
}

static void snc4_has_four_numa_nodes_per_ccx(void) {
	struct topology *t = test_topology_file("intel-xeon-8480-2s-snc4.xml");

	if (!t)
		return;
	CHECK_INT(t->n_ccx, 2);
	for (unsigned i = 0; i < t->n_ccx; i++) {
		CHECK_INT(t->ccx[i].n_numa_nodes, 4);
		CHECK_INT(t->ccx[i].numa_node, 4 * i);
		CHECK_INT(t->ccx[i].package, i);
		CHECK_INT(t->ccx[i].n_pus, 112);
	}
	topology_free(t);
}

/* PUs 0-7 and 88-95 are only in complete_cpuset: offline, so not counted. */
static void power9_offline_pus_are_excluded(void) {
	struct topology *t = test_topology_file("ibm-power9-2s.xml");

	if (!t)
		return;
	CHECK_STR(fmt(&t->online), "8-87,96-175");
	CHECK_INT(t->n_pus, 160);
	CHECK_INT(topology_ccx_of_cpu(t, 0), -1);
	CHECK_INT(topology_ccx_of_cpu(t, 90), -1);
	CHECK_INT(topology_ccx_of_cpu(t, 8), 0);
	CHECK_STR(fmt(&t->ccx[0].cores[0].pus), "8-11");
	for (unsigned i = 0; i < t->n_ccx; i++) {
		CHECK(t->ccx[i].usable);
		CHECK_INT(t->ccx[i].n_cores, 2);
	}
	topology_free(t);
}

static void system_counts_every_online_cpu(void) {
	static const char *specs[] = { NULL, "", "system" };

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct topology *t = test_topology(specs[i]);

		if (!t)
			continue;
		check_consistent(t);
		CHECK_STR(t->source, "system");
		CHECK_INT(t->n_pus, sysconf(_SC_NPROCESSORS_ONLN));
		CHECK(t->n_cores > 0);
		topology_free(t);
	}
}

static void check_rejected(const char *spec, int expected) {
	static struct topology untouched;
	struct topology *t = &untouched;
	char *error = NULL;
	int r = topology_load(spec, &t, &error);

	printf("# %s: %s\n", spec, error ? error : "(no message)");
	CHECK(r < 0);
	if (expected)
		CHECK_INT(r, expected);
	CHECK(t == NULL);
	CHECK(error && *error);
	free(error);
	/* Callers that want no message must not crash either. */
	CHECK_INT(topology_load(spec, &t, NULL), r);
}

static void write_temp_file(char *path, const char *content) {
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_INT(write(fd, content, strlen(content)), (long long)strlen(content));
	close(fd);
}

static void bad_specs_are_errors(void) {
	char garbage[] = "/tmp/test-topology-XXXXXX";
	char empty[] = "/tmp/test-topology-XXXXXX";
	char spec[64];

	check_rejected("bogus", -EINVAL);
	check_rejected("System", -EINVAL);
	check_rejected("xml", -EINVAL);
	check_rejected("xml:", -EINVAL);
	check_rejected("xml:/nonexistent.xml", -ENOENT);
	check_rejected("xml:/", -EINVAL);
	check_rejected("synthetic:", -EINVAL);
	check_rejected("synthetic:garbage", -EINVAL);
	check_rejected("synthetic:pack:0 pu:1", 0);

	write_temp_file(garbage, "this is not <xml at all\n\x01\x02");
	snprintf(spec, sizeof(spec), "xml:%s", garbage);
	check_rejected(spec, -EINVAL);
	unlink(garbage);

	write_temp_file(empty, "");
	snprintf(spec, sizeof(spec), "xml:%s", empty);
	check_rejected(spec, -EINVAL);
	unlink(empty);
}

static void ccx_of_cpu_finds_present_cpus_only(void) {
	struct topology *t = test_topology(SYNTHETIC_1800X);

	if (!t)
		return;
	CHECK_INT(topology_ccx_of_cpu(t, 0), 0);
	CHECK_INT(topology_ccx_of_cpu(t, 8), 0);
	CHECK_INT(topology_ccx_of_cpu(t, 4), 1);
	CHECK_INT(topology_ccx_of_cpu(t, 15), 1);
	CHECK_INT(topology_ccx_of_cpu(t, 16), -1);
	CHECK_INT(topology_ccx_of_cpu(t, CPU_SETSIZE), -1);
	CHECK_INT(topology_ccx_of_cpu(t, 4000000000u), -1);
	CHECK_INT(topology_ccx_of_cpu(NULL, 0), -1);
	topology_free(t);
	topology_free(NULL);
}

/* ---- CCXs that are not alike ---- */

/* The 7950X3D as if it ran here: its /sys from a fixture tree. */
static struct topology *x3d_with(const char *root) {
	struct topology *t = test_topology_file("amd-ryzen9-7950x3d.xml");

	if (t)
		topology_read_system(t, root);
	return t;
}

/* cpufreq first; a source that sees every CCX alike gives way to one that
 * tells them apart; one that misses a CPU says nothing. */
static void clocks_come_from_cpufreq_then_cppc(void) {
	char root[PATH_MAX];
	struct topology *t;

	fixture_root(root);
	t = x3d_with(root);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_NONE);
		CHECK(t->ccx[0].clock == 0 && !topology_clocks_differ(t));
	}
	topology_free(t);

	/* The V-Cache die (CCX 0, 0-7,16-23) clocks lower. */
	fixture_cpus(root, 0, 7, "cpufreq/cpuinfo_max_freq", "5250000\n");
	fixture_cpus(root, 16, 23, "cpufreq/cpuinfo_max_freq", "5250000\n");
	fixture_cpus(root, 8, 15, "cpufreq/cpuinfo_max_freq", "5759000\n");
	fixture_cpus(root, 24, 31, "cpufreq/cpuinfo_max_freq", "5759000\n");
	fixture_cpus(root, 0, 31, "acpi_cppc/highest_perf", "166\n");
	t = x3d_with(root);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_CPUFREQ);
		CHECK(t->ccx[0].clock == 5250000 && t->ccx[1].clock == 5759000);
		CHECK(topology_clocks_differ(t));
	}
	topology_free(t);

	/* A driver that gives every core one top clock: CPPC tells. */
	fixture_cpus(root, 0, 31, "cpufreq/cpuinfo_max_freq", "5759000\n");
	fixture_cpus(root, 0, 7, "acpi_cppc/highest_perf", "231\n");
	t = x3d_with(root);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_CPPC);
		CHECK(t->ccx[0].clock == 231 && t->ccx[1].clock == 166);
	}
	topology_free(t);

	/* Where amd_x3d_vcache is bound, CPPC is its mode's ranking: no clock. */
	fixture_file(root, FIXTURE_X3D, "cache\n");
	t = x3d_with(root);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_CPUFREQ);
		CHECK(!topology_clocks_differ(t));
		CHECK_STR(t->x3d_mode, "cache");
	}
	topology_free(t);

	/* One CPU without cpufreq: cpufreq says nothing of its CCX. */
	fixture_cpus(root, 0, 7, "cpufreq/cpuinfo_max_freq", "5250000\n");
	fixture_cpus(root, 16, 23, "cpufreq/cpuinfo_max_freq", "5250000\n");
	fixture_file(root, "/sys/devices/system/cpu/cpu31/cpufreq/cpuinfo_max_freq", "garbage\n");
	t = x3d_with(root);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_NONE);
		CHECK(t->ccx[1].clocks[TOPOLOGY_CLOCK_CPUFREQ] == 0 && t->ccx[0].clocks[TOPOLOGY_CLOCK_CPUFREQ] == 5250000);
	}
	topology_free(t);
	fixture_remove(root);
}

/* Another machine's topology is never described by this machine's /sys;
 * the running system's is. */
static void only_the_running_system_reads_sys(void) {
	char root[PATH_MAX];
	struct topology *t = NULL;
	char *error = NULL;

	fixture_root(root);
	fixture_cpus(root, 0, 31, "cpufreq/cpuinfo_max_freq", "4000000\n");
	fixture_file(root, FIXTURE_X3D, "frequency\n");
	fixture_file(root, "/sys/kernel/debug/sched/llc_balancing/enabled", "1\n");
	CHECK_INT(topology_load_at("xml:" TEST_TOPOLOGIES_DIR "/amd-ryzen9-7950x3d.xml", root, &t, &error), 0);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_NONE);
		CHECK_STR(t->x3d_mode, "");
		CHECK_INT(t->llc_balancing, -1);
	}
	topology_free(t);
	t = NULL;
	CHECK_INT(topology_load_at("synthetic:pack:1 l3:2 core:1 pu:1", root, &t, &error), 0);
	if (t)
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_NONE);
	topology_free(t);
	t = NULL;
	CHECK_INT(topology_load_at("system", root, &t, &error), 0);
	if (t) {
		CHECK_STR(t->x3d_mode, "frequency");
		CHECK_INT(t->llc_balancing, 1);
		/* This machine's CPUs are all in the fixture: cpufreq is complete. */
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_CPUFREQ);
		CHECK(t->ccx[0].clock == 4000000);
	}
	topology_free(t);
	free(error);
	fixture_remove(root);
}

/* Exports a synthetic machine of two L3s with the CPU kinds given
 * (first..last PUs, FrequencyMaxMHz or NULL, forced efficiency or -1) to
 * path: what a hybrid part with one L3 per kind (Zen 5 and Zen 5c) looks
 * like to hwloc. */
struct kind {
	unsigned first, last;
	const char *mhz;
	int efficiency;
};

static void export_kinds(const char *path, const struct kind *kinds, size_t n) {
	hwloc_topology_t topo;

	CHECK_INT(hwloc_topology_init(&topo), 0);
	CHECK_INT(hwloc_topology_set_synthetic(topo, "pack:1 l3:2 core:4 pu:1"), 0);
	CHECK_INT(hwloc_topology_load(topo), 0);
	for (size_t i = 0; i < n; i++) {
		hwloc_bitmap_t set = hwloc_bitmap_alloc();
		struct hwloc_info_s info = { (char *)"FrequencyMaxMHz", (char *)kinds[i].mhz };
		hwloc_bitmap_set_range(set, (int)kinds[i].first, (int)kinds[i].last);
		CHECK_INT(hwloc_cpukinds_register(topo, set, kinds[i].efficiency, kinds[i].mhz ? 1 : 0,
						  kinds[i].mhz ? &info : NULL, 0), 0);
		hwloc_bitmap_free(set);
	}
	CHECK_INT(hwloc_topology_export_xml(topo, path, 0), 0);
	hwloc_topology_destroy(topo);
}

static struct topology *load_kinds(const struct kind *kinds, size_t n) {
	char path[] = "/tmp/ccxd-test-kinds-XXXXXX", spec[64];
	int fd = mkstemp(path);
	struct topology *t;

	CHECK(fd >= 0);
	close(fd);
	export_kinds(path, kinds, n);
	snprintf(spec, sizeof(spec), "xml:%s", path);
	t = test_topology(spec);
	unlink(path);
	return t;
}

static void hybrid_ccxs_from_cpu_kinds(void) {
	static const struct kind by_frequency[] = { { 0, 3, "5100", -1 }, { 4, 7, "3300", -1 } };
	static const struct kind by_rank[] = { { 0, 3, NULL, 0 }, { 4, 7, NULL, 1 } };
	static const struct kind alike[] = { { 0, 7, "4000", -1 } };
	struct topology *t = load_kinds(by_frequency, 2);

	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_KINDS);
		CHECK(t->ccx[0].clock == 5100000 && t->ccx[1].clock == 3300000);
		CHECK(!t->ccx[0].efficiency_cores && t->ccx[1].efficiency_cores);
	}
	topology_free(t);
	/* Ranked, without frequencies: the rank stands for the clock. */
	t = load_kinds(by_rank, 2);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_EFFICIENCY);
		CHECK(t->ccx[0].clock < t->ccx[1].clock);
		CHECK(t->ccx[0].efficiency_cores && !t->ccx[1].efficiency_cores);
	}
	topology_free(t);
	t = load_kinds(alike, 1);
	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_KINDS);
		CHECK(!topology_clocks_differ(t) && !t->ccx[0].efficiency_cores && !t->ccx[1].efficiency_cores);
	}
	topology_free(t);
}

/* Real exports: the hybrid i7-1370P's one L3 holds both kinds (nothing sets
 * it apart); the 1900X's second die has no memory of its own; exports from
 * CPUID say nothing of memory, which is not "none". */
static void kinds_and_memory_of_real_machines(void) {
	struct topology *t = test_topology_file("intel-core-i7-1370p-hybrid.xml");

	if (t) {
		CHECK_INT(t->clock_source, TOPOLOGY_CLOCK_KINDS);
		CHECK(t->ccx[0].clock == 5000000 && !t->ccx[0].efficiency_cores);
	}
	topology_free(t);
	t = test_topology_file("amd-threadripper-1900x-numa.xml");
	if (t)
		CHECK(!t->ccx[0].no_local_memory && t->ccx[1].no_local_memory);
	topology_free(t);
	static const char *const with_memory[] = { "amd-threadripper-1950x-numa.xml", "amd-epyc-7a53-nps4.xml",
						   "amd-ryzen9-7950x3d.xml", "intel-xeon-8480-2s-snc4.xml" };
	for (size_t f = 0; f < sizeof(with_memory) / sizeof(with_memory[0]); f++) {
		t = test_topology_file(with_memory[f]);
		for (unsigned c = 0; t && c < t->n_ccx; c++)
			CHECK(!t->ccx[c].no_local_memory);
		topology_free(t);
	}
}

TEST_MAIN(T(readme_machines_have_readme_counts), T(readme_machines_have_readme_l3_sizes),
	  T(readme_machines_have_readme_pu_numbering), T(unequal_l3_sizes_on_7950x3d),
	  T(every_xml_file_loads), T(synthetic_1800x_has_two_ccx_with_linux_numbering),
	  T(synthetic_1950x_numa_has_two_ccx_per_node), T(synthetic_2cpu_splits_into_two_ccx),
	  T(shared_l2_is_the_ccx_without_l3), T(package_is_the_ccx_without_shared_cache),
	  T(private_l2_does_not_make_a_ccx), T(machine_is_the_ccx_without_packages),
	  T(pus_stand_for_cores_without_cores), T(pus_beyond_cpu_setsize_are_left_out),
	  T(threadripper_1950x_numa_nodes_and_packages),
	  T(threadripper_1900x_second_ccx_has_no_numa_node), T(epyc_7551_two_ccx_per_numa_node),
	  T(snc4_has_four_numa_nodes_per_ccx), T(power9_offline_pus_are_excluded),
	  T(system_counts_every_online_cpu), T(bad_specs_are_errors),
	  T(ccx_of_cpu_finds_present_cpus_only), T(clocks_come_from_cpufreq_then_cppc),
	  T(only_the_running_system_reads_sys), T(hybrid_ccxs_from_cpu_kinds), T(kinds_and_memory_of_real_machines))
