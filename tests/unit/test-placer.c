/* Placement policy on real machines' topologies. */
#include <errno.h>
#include <stdlib.h>

#include "cpulist.h"
#include "placer.h"
#include "test.h"
#include "topologies.h"

static const char *list(const cpu_set_t *set) {
	static char buf[CPULIST_MAX];

	return cpulist_format(set, buf, sizeof(buf));
}

static void pin_takes_every_listed_ccx(void) {
	struct topology *t = test_topology_file("amd-ryzen9-3950x.xml");
	unsigned ccx_list[] = { 1, 2 }, ccx;
	struct rule r = { .name = "x", .ccx = ccx_list, .n_ccx = 2, .policy = RULE_POLICY_PIN };
	cpu_set_t cpus;

	CHECK_INT(placer_rule_cpus(t, &r, NULL, &cpus, &ccx), 0);
	CHECK_STR(list(&cpus), "4-11,20-27");
	topology_free(t);
}

static void smt_avoid_takes_one_pu_per_core(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	unsigned ccx_list[] = { 1 }, ccx;
	struct rule r = { .name = "x", .ccx = ccx_list, .n_ccx = 1, .policy = RULE_POLICY_PIN, .smt = RULE_SMT_AVOID };
	cpu_set_t cpus;

	CHECK_INT(placer_rule_cpus(t, &r, NULL, &cpus, &ccx), 0);
	CHECK_STR(list(&cpus), "4-7");
	topology_free(t);
}

static void compact_auto_takes_the_least_loaded_ccx(void) {
	struct topology *t = test_topology_file("amd-epyc-7742-2s.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_COMPACT };
	unsigned *load = calloc(t->n_ccx, sizeof(*load)), ccx;
	cpu_set_t cpus;

	for (unsigned i = 0; i < t->n_ccx; i++)
		load[i] = i == 5 ? 0 : 1;
	CHECK_INT(placer_rule_cpus(t, &r, &(struct placer_context){ load, t->n_ccx, NULL }, &cpus, &ccx), 0);
	CHECK_INT(ccx, 5);
	CHECK_STR(list(&cpus), list(&t->ccx[5].cpus));
	free(load);
	topology_free(t);
}

static void auto_honours_the_cpuset(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_COMPACT };
	cpu_set_t allowed, cpus;
	unsigned ccx;

	CHECK_INT(cpulist_parse("12-15", &allowed), 0);
	CHECK_INT(placer_rule_cpus(t, &r, &(struct placer_context){ NULL, 0, &allowed }, &cpus, &ccx), 0);
	CHECK_INT(ccx, 1);
	topology_free(t);
}

static void prefer_cache_and_frequency_on_an_x3d(void) {
	struct topology *t = test_topology_file("amd-ryzen9-7950x3d.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_COMPACT, .prefer = RULE_PREFER_CACHE };
	unsigned load[2] = { 5, 0 }, ccx;
	cpu_set_t cpus;

	/* The big cache wins even though more is placed there already. */
	CHECK_INT(placer_rule_cpus(t, &r, &(struct placer_context){ load, 2, NULL }, &cpus, &ccx), 0);
	CHECK_INT(ccx, 0);
	r.prefer = RULE_PREFER_FREQUENCY;
	CHECK_INT(placer_rule_cpus(t, &r, &(struct placer_context){ NULL, 0, NULL }, &cpus, &ccx), 0);
	CHECK_INT(ccx, 1);
	topology_free(t);
}

static void spread_gives_each_ccx_a_set(void) {
	struct topology *t = test_topology_file("amd-ryzen9-3950x.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_SPREAD };
	cpu_set_t *sets = calloc(t->n_ccx, sizeof(*sets));

	CHECK_INT(placer_spread_sets(t, &r, NULL, sets), 4);
	CHECK_STR(list(&sets[0]), "0-3,16-19");
	CHECK_STR(list(&sets[3]), "12-15,28-31");
	free(sets);
	topology_free(t);
}

static void missing_ccx_is_an_error(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	unsigned ccx_list[] = { 7 }, ccx;
	struct rule r = { .name = "x", .ccx = ccx_list, .n_ccx = 1 };
	cpu_set_t cpus;

	CHECK_INT(placer_rule_cpus(t, &r, NULL, &cpus, &ccx), -ENOENT);
	r.policy = RULE_POLICY_PAIR;
	CHECK_INT(placer_rule_cpus(t, &r, NULL, &cpus, &ccx), -EOPNOTSUPP);
	topology_free(t);
}

static void groups_go_where_there_is_room(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double demand[] = { 2.0, 3.0, 7.0 }, full[] = { 8.0, 1.0, 8.0 }, huge[] = { 20.0 };
	int ccx[3];

	/* 8 PUs per CCX: the 7 goes first, the 3 and the 2 share the other. */
	CHECK_INT(placer_groups(t, demand, 3, NULL, NULL, ccx), 3);
	CHECK_INT(ccx[2], 0);
	CHECK_INT(ccx[1], 1);
	CHECK_INT(ccx[0], 1);
	/* A full machine: what does not fit is left alone. */
	CHECK_INT(placer_groups(t, full, 3, NULL, NULL, ccx), 2);
	CHECK_INT(ccx[0], 0);
	CHECK_INT(ccx[1], -1);
	CHECK_INT(ccx[2], 1);
	/* A group larger than any CCX. */
	CHECK_INT(placer_groups(t, huge, 1, NULL, NULL, ccx), 0);
	CHECK_INT(ccx[0], -1);
	topology_free(t);
}

static void groups_avoid_busy_ccxs(void) {
	struct topology *t = test_topology_file("amd-epyc-7763-2s.xml");
	double *busy = calloc(t->n_ccx, sizeof(*busy)), demand[] = { 2.0 };
	int ccx;

	for (unsigned i = 0; i < t->n_ccx; i++)
		busy[i] = i == 9 ? 1.0 : 7.5;
	CHECK_INT(placer_groups(t, demand, 1, busy, NULL, &ccx), 1);
	CHECK_INT(ccx, 9);
	free(busy);
	topology_free(t);
}

static void more_groups_than_ccxs(void) {
	struct topology *t = test_topology_file("amd-ryzen9-5900x.xml");
	double demand[6] = { 1, 1, 1, 1, 1, 1 };
	int ccx[6], on0 = 0;

	CHECK_INT(placer_groups(t, demand, 6, NULL, NULL, ccx), 6);
	for (int i = 0; i < 6; i++)
		on0 += ccx[i] == 0;
	CHECK_INT(on0, 3);   /* balanced over the two CCXs */
	topology_free(t);
}

static void seatings_on_a_zen1_ccx(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	cpu_set_t cpus[4], taken;

	CHECK_INT(placer_seat(&t->ccx[1], SEATING_CORES, 2, NULL, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "4,12");
	CHECK_STR(list(&cpus[1]), "5,13");
	CHECK_INT(placer_seat(&t->ccx[1], SEATING_SMT, 2, NULL, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "4");
	CHECK_STR(list(&cpus[1]), "12");
	CHECK_INT(placer_seat(&t->ccx[1], SEATING_SHARED, 3, NULL, NULL, cpus), 0);
	CHECK_STR(list(&cpus[2]), "4");
	/* Another group took cores 4 and 5: this one gets the free ones. */
	CHECK_INT(cpulist_parse("4-5,12-13", &taken), 0);
	CHECK_INT(placer_seat(&t->ccx[1], SEATING_CORES, 2, NULL, &taken, cpus), 0);
	CHECK_STR(list(&cpus[0]), "6,14");
	CHECK_STR(list(&cpus[1]), "7,15");
	/* Five members do not fit one per core on four cores, nor on one core's SMT. */
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_CORES, 5, NULL, NULL, cpus), -ENOSPC);
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_SMT, 3, NULL, NULL, cpus), -ENOSPC);
	topology_free(t);
}

static void no_smt_without_siblings(void) {
	struct topology *t = test_topology_file("amd-epyc-7763-2s.xml");
	cpu_set_t cpus[2];

	CHECK_INT(placer_seat(&t->ccx[0], SEATING_SMT, 2, NULL, NULL, cpus), -ENOSPC);
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_CORES, 2, NULL, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "0");
	CHECK_STR(list(&cpus[1]), "1");
	topology_free(t);
}

static void seatings_for_busy_threads(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	unsigned three[] = { 3 }, mixed[] = { 1, 2 }, five[] = { 5 };
	cpu_set_t cpus[2];

	/* A process with three busy threads: a core for each, or their PUs
	 * packed onto siblings; one CPU cannot hold them. */
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_CORES, 1, three, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "0-2,8-10");
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_SMT, 1, three, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "0-1,8");
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_SHARED, 1, three, NULL, cpus), -ENOSPC);
	/* A writer and a reader with two busy threads. */
	CHECK_INT(placer_seat(&t->ccx[1], SEATING_CORES, 2, mixed, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "4,12");
	CHECK_STR(list(&cpus[1]), "5-6,13-14");
	CHECK_INT(placer_seat(&t->ccx[1], SEATING_SMT, 2, mixed, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "4");
	CHECK_STR(list(&cpus[1]), "5,12");
	/* Five busy threads: more than the 4 cores, but the 8 PUs hold them. */
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_CORES, 1, five, NULL, cpus), -ENOSPC);
	CHECK_INT(placer_seat(&t->ccx[0], SEATING_SMT, 1, five, NULL, cpus), 0);
	CHECK_STR(list(&cpus[0]), "0-2,8-9");
	topology_free(t);
}

static void load_of_each_ccx_from_its_cpus(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double cpu_load[16] = { 0 }, busy[2];

	/* CCX 0 is 0-3,8-11; CPUs past the end of cpu_load count as idle. */
	cpu_load[0] = 1.0;
	cpu_load[9] = 0.5;
	cpu_load[4] = 0.25;
	placer_ccx_load(t, cpu_load, 16, busy);
	CHECK(busy[0] > 1.49 && busy[0] < 1.51);
	CHECK(busy[1] > 0.24 && busy[1] < 0.26);
	placer_ccx_load(t, cpu_load, 2, busy);
	CHECK(busy[0] > 0.99 && busy[0] < 1.01);
	CHECK(busy[1] == 0.0);
	topology_free(t);
}

/* Other programs' load on the CPUs steers a group to the CCX with the most
 * room left, but never refuses it a CCX where ccxd's own groups leave room. */
static void a_ccx_busy_with_other_load_is_avoided(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double cpu_load[16] = { 0 }, load[2], seated[2] = { 0.0, 5.0 }, demand[] = { 2.0 };
	int ccx;

	/* Idle, the first CCX of equals wins. */
	CHECK_INT(placer_groups(t, demand, 1, NULL, NULL, &ccx), 1);
	CHECK_INT(ccx, 0);
	/* Half of CCX 0's CPUs busy with something else: CCX 1 has more room. */
	for (int cpu = 0; cpu < 4; cpu++)
		cpu_load[cpu] = 1.0;
	placer_ccx_load(t, cpu_load, 16, load);
	CHECK_INT(placer_groups(t, demand, 1, NULL, load, &ccx), 1);
	CHECK_INT(ccx, 1);
	/* Both loaded, CCX 0 less: the less loaded one, not no room at all. */
	for (int cpu = 0; cpu < 16; cpu++)
		cpu_load[cpu] = cpu < 4 || (cpu >= 8 && cpu < 12) ? 0.8 : 0.9;
	placer_ccx_load(t, cpu_load, 16, load);
	CHECK_INT(placer_groups(t, demand, 1, NULL, load, &ccx), 1);
	CHECK_INT(ccx, 0);
	/* ccxd's own groups hold their room: 5 CPUs seated on CCX 1 outweigh
	 * 4 CPUs of other load on CCX 0 ... */
	for (int cpu = 0; cpu < 16; cpu++)
		cpu_load[cpu] = cpu < 4 ? 1.0 : 0.0;
	placer_ccx_load(t, cpu_load, 16, load);
	CHECK_INT(placer_groups(t, demand, 1, seated, load, &ccx), 1);
	CHECK_INT(ccx, 0);
	/* ... and a group needing more than they leave goes where other load is. */
	demand[0] = 4.0;
	CHECK_INT(placer_groups(t, demand, 1, seated, load, &ccx), 1);
	CHECK_INT(ccx, 0);
	topology_free(t);
}

TEST_MAIN(T(seatings_on_a_zen1_ccx), T(seatings_for_busy_threads), T(load_of_each_ccx_from_its_cpus),
	  T(a_ccx_busy_with_other_load_is_avoided), T(no_smt_without_siblings), T(pin_takes_every_listed_ccx), T(smt_avoid_takes_one_pu_per_core), T(compact_auto_takes_the_least_loaded_ccx),
	  T(auto_honours_the_cpuset), T(prefer_cache_and_frequency_on_an_x3d), T(spread_gives_each_ccx_a_set),
	  T(missing_ccx_is_an_error), T(groups_go_where_there_is_room), T(groups_avoid_busy_ccxs),
	  T(more_groups_than_ccxs))
