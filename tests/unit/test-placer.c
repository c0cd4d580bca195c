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

/* ccxd counts the load only for a rule that weighs it: with one CCX
 * listed, no load changes what any policy gives, so none is counted. */
static void one_listed_ccx_weighs_no_load(void) {
	struct topology *t = test_topology_file("amd-epyc-7742-2s.xml");
	static const enum rule_policy policies[] = { RULE_POLICY_PIN, RULE_POLICY_COMPACT, RULE_POLICY_SPREAD };
	unsigned one[] = { 3 }, two[] = { 3, 5 }, *load = calloc(t->n_ccx, sizeof(*load)), ccx;
	struct rule compact = { .name = "x", .ccx = two, .n_ccx = 2, .policy = RULE_POLICY_COMPACT };
	cpu_set_t cpus;

	for (unsigned i = 0; i < t->n_ccx; i++)
		load[i] = i == 3 ? 50 : 0;
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		struct rule r = { .name = "x", .ccx = one, .n_ccx = 1, .policy = policies[i] };
		cpu_set_t with, without;

		CHECK(!placer_rule_weighs_load(&r));
		CHECK_INT(placer_rule_cpus(t, &r, &(struct placer_context){ load, t->n_ccx, NULL }, &with, &ccx), 0);
		CHECK_INT(placer_rule_cpus(t, &r, NULL, &without, &ccx), 0);
		CHECK(CPU_EQUAL(&with, &without));
	}
	/* Two listed, or ccx = auto: the least loaded among equals. */
	CHECK(placer_rule_weighs_load(&compact));
	CHECK_INT(placer_rule_cpus(t, &compact, &(struct placer_context){ load, t->n_ccx, NULL }, &cpus, &ccx), 0);
	CHECK_INT(ccx, 5);
	CHECK(placer_rule_weighs_load(&(struct rule){ .name = "x", .ccx_auto = true, .policy = RULE_POLICY_PIN }));
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

/* prefer = frequency follows the clocks the machine gives, whichever CCX
 * they favour; the smaller L3 only where none are known. */
static void prefer_frequency_follows_known_clocks(void) {
	struct topology *t = test_topology_file("amd-ryzen9-7950x3d.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_COMPACT, .prefer = RULE_PREFER_FREQUENCY };
	unsigned order[2], load[2] = { 0, 5 };
	struct placer_context ctx = { load, 2, NULL };

	if (!t)
		return;
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 1);   /* no clocks: the smaller L3, however loaded */
	t->ccx[0].clocks[TOPOLOGY_CLOCK_CPPC] = 231;
	t->ccx[1].clocks[TOPOLOGY_CLOCK_CPPC] = 166;
	topology_pick_clocks(t);
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 0);
	t->ccx[0].clocks[TOPOLOGY_CLOCK_CPUFREQ] = 5250000;
	t->ccx[1].clocks[TOPOLOGY_CLOCK_CPUFREQ] = 5759000;
	topology_pick_clocks(t);
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 1);
	/* Known and alike: nothing to prefer, the load decides. */
	t->ccx[1].clocks[TOPOLOGY_CLOCK_CPUFREQ] = 5250000;
	t->ccx[0].clocks[TOPOLOGY_CLOCK_CPPC] = t->ccx[1].clocks[TOPOLOGY_CLOCK_CPPC] = 0;
	topology_pick_clocks(t);
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 0);
	/* prefer = cache is the L3 alone. */
	r.prefer = RULE_PREFER_CACHE;
	load[0] = 9;
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 0);
	topology_free(t);
}

/* The 1900X's second die has no memory: rules and groups go to the first
 * while it has room, whatever the load. */
static void ccxs_with_local_memory_come_first(void) {
	struct topology *t = test_topology_file("amd-threadripper-1900x-numa.xml");
	struct rule r = { .name = "x", .ccx_auto = true, .policy = RULE_POLICY_COMPACT };
	unsigned order[2], processes[2] = { 4, 0 };
	struct placer_context ctx = { processes, 2, NULL };
	double demand[] = { 2.0 }, busy[] = { 5.0, 0.0 }, full[] = { 7.0, 0.0 }, load[] = { 3.0, 0.0 };
	int ccx = -1;

	if (!t)
		return;
	CHECK_INT(placer_rule_candidates(t, &r, &ctx, order), 2);
	CHECK_INT(order[0], 0);
	CHECK_INT(placer_groups(t, demand, 1, busy, load, &ccx), 1);
	CHECK_INT(ccx, 0);
	/* No room left there: the die without memory is better than nothing. */
	CHECK_INT(placer_groups(t, demand, 1, full, NULL, &ccx), 1);
	CHECK_INT(ccx, 1);
	topology_free(t);
}

/* Room as the seating counts it: one-per-core needs a core no other group
 * holds for each busy thread, however many CPUs the CCX has. */
static void room_is_counted_as_the_seating_counts_it(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");   /* 2 CCXs of 4 cores, 8 CPUs */
	unsigned eight[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct placer_group_need need = { 8.0, SEATING_CORES, 8, eight };
	cpu_set_t taken[2];
	double busy[2] = { 3.0, 0.0 }, load[2] = { 0.0, 6.0 };

	if (!t)
		return;
	/* Eight single-threaded busy processes: 8 CPUs, but 4 cores, and
	 * smt-siblings puts single threads on one core's 2 PUs: only
	 * shared-cpu seats them. */
	CHECK(!placer_seat_fits(&t->ccx[0], SEATING_CORES, 8, eight, NULL));
	CHECK(!placer_seat_fits(&t->ccx[0], SEATING_SMT, 8, eight, NULL));
	CHECK(placer_seat_fits(&t->ccx[0], SEATING_SHARED, 8, eight, NULL));
	/* Nowhere does it fit one per core: a CCX with room in CPUs still
	 * takes it, and the seating says -ENOSPC there. */
	CHECK_INT(placer_group_ccx(t, &need, NULL, NULL, NULL), 0);

	/* Another group holds three cores of CCX 0 (0-2 and 8-10), and other
	 * programs keep CCX 1 busy: by CPUs CCX 0 has the most room left, but
	 * a pair one per core fits only on CCX 1's free cores. */
	CPU_ZERO(&taken[0]);
	CPU_ZERO(&taken[1]);
	for (int cpu = 0; cpu < 3; cpu++) {
		CPU_SET(cpu, &taken[0]);
		CPU_SET(cpu + 8, &taken[0]);
	}
	need = (struct placer_group_need){ 1.2, SEATING_CORES, 2, NULL };
	int old = -1;
	CHECK_INT(placer_groups(t, &need.demand, 1, busy, load, &old), 1);
	CHECK_INT(old, 0);
	CHECK(!placer_seat_fits(&t->ccx[0], SEATING_CORES, 2, NULL, &taken[0]));
	CHECK_INT(placer_group_ccx(t, &need, busy, load, taken), 1);
	/* One thread: the free core of CCX 0 does. */
	need.n = 1;
	CHECK_INT(placer_group_ccx(t, &need, busy, load, taken), 0);
	/* smt-siblings of a pair fit the free core's two PUs. */
	need = (struct placer_group_need){ 1.2, SEATING_SMT, 2, NULL };
	CHECK_INT(placer_group_ccx(t, &need, busy, load, taken), 0);
	/* Demand beyond a CCX's CPUs fits nowhere. */
	need.demand = 9.0;
	CHECK_INT(placer_group_ccx(t, &need, NULL, NULL, NULL), -1);
	topology_free(t);

	/* EPYC 7402: 3-core CCXs. Four members one per core fit none. */
	t = test_topology_file("amd-epyc-7402-2s.xml");
	if (t) {
		unsigned four[4] = { 1, 1, 1, 1 };
		for (unsigned c = 0; c < t->n_ccx; c++)
			CHECK(!placer_seat_fits(&t->ccx[c], SEATING_CORES, 4, four, NULL) &&
			      placer_seat_fits(&t->ccx[c], SEATING_CORES, 3, four, NULL));
	}
	topology_free(t);
}

TEST_MAIN(T(seatings_on_a_zen1_ccx), T(seatings_for_busy_threads), T(load_of_each_ccx_from_its_cpus),
	  T(a_ccx_busy_with_other_load_is_avoided), T(no_smt_without_siblings), T(pin_takes_every_listed_ccx), T(smt_avoid_takes_one_pu_per_core), T(compact_auto_takes_the_least_loaded_ccx), T(one_listed_ccx_weighs_no_load),
	  T(auto_honours_the_cpuset), T(prefer_cache_and_frequency_on_an_x3d), T(spread_gives_each_ccx_a_set),
	  T(missing_ccx_is_an_error), T(groups_go_where_there_is_room), T(groups_avoid_busy_ccxs),
	  T(more_groups_than_ccxs), T(prefer_frequency_follows_known_clocks), T(ccxs_with_local_memory_come_first),
	  T(room_is_counted_as_the_seating_counts_it))
