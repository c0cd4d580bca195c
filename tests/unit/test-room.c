/* The room on each CCX for a group the automatic policy places, from struct
 * literals on a real machine's topology: a Ryzen 7 1800X, two CCXs of four
 * cores and eight CPUs (CCX 0: 0-3,8-11; CCX 1: 4-7,12-15). */
#include <stdlib.h>

#include "cpulist.h"
#include "room.h"
#include "test.h"
#include "topologies.h"

static const char *list(const cpu_set_t *set) {
	static char buf[CPULIST_MAX];

	return cpulist_format(set, buf, sizeof(buf));
}

static cpu_set_t cpus_of(const char *l) {
	cpu_set_t set;

	CPU_ZERO(&set);
	CHECK_INT(cpulist_parse(l, &set), 0);
	return set;
}

/* The topology read from its file is another machine's, whose load room
 * ignores; as this machine's, it is counted. */
static struct topology *this_machine(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");

	if (t) {
		free(t->source);
		t->source = NULL;
	}
	return t;
}

static void a_seated_group_keeps_its_ccx_and_cpus(void) {
	struct topology *t = this_machine();
	pid_t a[] = { 100, 101 }, b[] = { 200, 201, 202, 203, 204, 205, 206 };
	struct group ga = { .id = 100, .pids = a, .n_pids = 2, .demand = 2.0 };
	struct group gb = { .id = 200, .pids = b, .n_pids = 7, .demand = 7.0 };
	struct room_group groups[] = {
		{ .group = &ga, .ccx = -1 },
		{ .group = &gb, .ccx = 0, .seated = true, .cpus = cpus_of("0-3,8-10") },
	};
	struct room_view v = { t, NULL, groups, 2, 0 };
	cpu_set_t taken;

	if (!t)
		return;
	/* 7 of CCX 0's 8 CPUs are the other group's: the pair goes to CCX 1,
	 * where nothing is taken. */
	CHECK_INT(room_choose_ccx(&v, SEATING_CORES, NULL, &taken), 1);
	CHECK_INT(CPU_COUNT(&taken), 0);
	room_taken_on(&v, 0, &taken);
	CHECK_STR(list(&taken), "0-3,8-10");
	/* Not seated (measuring, or reverted), it counts nowhere: both CCXs
	 * have room, and the first wins the tie. */
	groups[1].seated = false;
	CHECK_INT(room_choose_ccx(&v, SEATING_CORES, NULL, &taken), 0);
	room_taken_on(&v, 0, &taken);
	CHECK_INT(CPU_COUNT(&taken), 0);
	/* The group being placed never counts against itself. */
	groups[1].seated = true;
	v.self = 1;
	room_taken_on(&v, 0, &taken);
	CHECK_INT(CPU_COUNT(&taken), 0);
	/* Demand beyond any CCX's CPUs: no room anywhere. */
	ga.demand = 9.0;
	v.self = 0;
	CHECK_INT(room_choose_ccx(&v, SEATING_CORES, NULL, &taken), -1);
	topology_free(t);
}

static void other_work_is_what_the_groups_did_not_use(void) {
	struct topology *t = this_machine();
	double cpu_load[16] = { [4] = 1.0, [5] = 0.5, [0] = 0.25 };
	struct sampler_process procs[] = {
		{ .pid = 100, .cpu = 1.0, .last_cpu = 4, .busy_threads = 2 },
		{ .pid = 200, .cpu = 0.5, .last_cpu = 5 },
	};
	struct sampler_result sample = { .procs = procs, .n_procs = 2, .cpu_load = cpu_load, .n_cpu_load = 16 };
	pid_t a[] = { 100, 101 }, b[] = { 200 };
	struct group ga = { .id = 100, .pids = a, .n_pids = 2, .demand = 1.0 };
	struct group gb = { .id = 200, .pids = b, .n_pids = 1, .demand = 1.0 };
	struct room_group groups[] = {
		{ .group = &ga, .ccx = 1, .seated = true },
		{ .group = &gb, .ccx = 1, .seated = true },
	};
	struct room_view v = { t, &sample, groups, 2, 0 };
	struct crowding_ccx *c;
	unsigned *threads;

	if (!t)
		return;
	/* CCX 1 measured 1.5 CPUs busy: the group's own 1.0, and 0.5 of the
	 * seated other group, which counts by its demand (1.0) instead. */
	c = room_around(&v);
	CHECK(c != NULL);
	if (c) {
		CHECK(c[1].cpus == 8.0);
		CHECK(c[1].busy == 1.5);
		CHECK(c[1].taken == 1.0);
		CHECK(c[0].busy == 0.25 && c[0].taken == 0.25);
		free(c);
	}
	/* Not seated, the other group's use is other programs' load. */
	groups[1].seated = false;
	c = room_around(&v);
	CHECK(c && c[1].taken == 0.5 && c[1].busy == 1.5);
	free(c);
	/* The same, for another machine's topology: no load is counted. */
	t->source = strdup("xml:elsewhere.xml");
	c = room_around(&v);
	CHECK(c && c[1].taken == 0.0 && c[1].busy == 0.0);
	free(c);
	/* Each member's busy threads: 0 for one the sample did not see. */
	threads = room_threads(&v, &ga);
	CHECK(threads && threads[0] == 2 && threads[1] == 0);
	free(threads);
	topology_free(t);
}

TEST_MAIN(T(a_seated_group_keeps_its_ccx_and_cpus), T(other_work_is_what_the_groups_did_not_use))
