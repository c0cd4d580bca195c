/* When a kept group's CCX is crowded, and where it goes: the pure policy,
 * with the shares read from real pairs on two one-CPU CCXs (BENCHMARKS.md,
 * "Crowding"). */
#include "crowding.h"
#include "test.h"
#include "topologies.h"

static const struct crowding_options defaults = { CROWDING_DEFAULT_WAIT, CROWDING_DEFAULT_SAMPLES };

/* A ping-pong pair kept on one CPU, alone there: its members wait for
 * each other 34 % of the time they want a CPU, as they did once seated. */
static void a_pair_alone_is_not_crowded(void) {
	struct crowding_ccx home = { .cpus = 1, .taken = 0.04 };
	unsigned strikes = 0;

	for (int i = 0; i < 10; i++)
		CHECK(!crowding_sample(&strikes, 0.34 + (i % 3) * 0.01, 0.34, &home, 1.0, &defaults));
	CHECK_INT(strikes, 0);
	/* Ticks' noise in the other load is no crowd (CROWDING_SLACK). */
	home.taken = 0.2;
	for (int i = 0; i < 10; i++)
		CHECK(!crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
}

/* Two busy processes kept on one CPU wait 43 % of the time: what they
 * were kept with, however the other load reads. */
static void waiting_for_each_other_is_not_crowding(void) {
	struct crowding_ccx home = { .cpus = 1, .taken = 0.6 };
	unsigned strikes = 0;

	for (int i = 0; i < 10; i++)
		CHECK(!crowding_sample(&strikes, 0.45, 0.43, &home, 1.0, &defaults));
}

/* A program pinned to the pair's CPU: the pair's share rises from 34 to
 * 57 %, and the CCX is short; after crowded_samples in a row, it is
 * crowded. */
static void a_sustained_crowd_is_noticed(void) {
	struct crowding_ccx home = { .cpus = 1, .taken = 0.55 };
	unsigned strikes = 0;

	CHECK(!crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
	CHECK(!crowding_sample(&strikes, 0.58, 0.34, &home, 1.0, &defaults));
	CHECK(crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
	CHECK_INT(strikes, 3);
	/* A pair kept on CPUs of their own: 1 % once seated, 34 % crowded. */
	strikes = 0;
	home = (struct crowding_ccx){ .cpus = 2, .taken = 0.6 };
	for (int i = 0; i < 2; i++)
		CHECK(!crowding_sample(&strikes, 0.34, 0.01, &home, 2.0, &defaults));
	CHECK(crowding_sample(&strikes, 0.34, 0.01, &home, 2.0, &defaults));
}

/* What the other work got is not what it wants: a ping-pong pair kept on
 * CPU 1 and a CPU-bound program pinned there read 0.54 and 0.46 of it,
 * and the CPU had no idle time. 0.54 free looks like room for the 0.76
 * the pair used alone; a CCX with no idle time has none. A pair that
 * fills its CPU by itself is not crowded by it, whatever its wait. */
static void a_full_ccx_has_no_room(void) {
	struct crowding_ccx home = { .cpus = 1, .taken = 0.46, .busy = 1.0 };
	unsigned strikes = 0;

	CHECK(!crowding_sample(&strikes, 0.57, 0.36, &home, 0.76, &defaults));
	CHECK(!crowding_sample(&strikes, 0.57, 0.36, &home, 0.76, &defaults));
	CHECK(crowding_sample(&strikes, 0.57, 0.36, &home, 0.76, &defaults));
	/* The same split with idle time left is room after all. */
	strikes = 0;
	home.busy = 0.6;
	for (int i = 0; i < 5; i++)
		CHECK(!crowding_sample(&strikes, 0.57, 0.36, &home, 0.76, &defaults));
	home = (struct crowding_ccx){ .cpus = 1, .taken = 0.04, .busy = 1.0 };
	for (int i = 0; i < 5; i++)
		CHECK(!crowding_sample(&strikes, 0.57, 0.36, &home, 1.0, &defaults));
	/* Nor is a full CCX anyone's target, nor a spilled program's way back. */
	struct crowding_ccx ccx[] = { { .cpus = 1, .taken = 1.0, .busy = 1.0 },
				      { .cpus = 1, .taken = 0.46, .busy = 1.0 } };
	CHECK_INT(crowding_target(ccx, 2, 0, 0.5), -1);
	CHECK_INT(crowding_spill_target(ccx, 2, 0, 0.5), -1);
	for (int i = 0; i < 5; i++)
		CHECK(!crowding_room_again(&strikes, &ccx[1], 0.5, &defaults));
}

/* A sample without the crowd starts the count again: a second's compile
 * is no reason to move. Nor is a share not known. */
static void a_short_crowd_is_not(void) {
	struct crowding_ccx home = { .cpus = 1, .taken = 0.55 }, calm = { .cpus = 1, .taken = 0.02 };
	unsigned strikes = 0;

	CHECK(!crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
	CHECK(!crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
	CHECK(!crowding_sample(&strikes, 0.34, 0.34, &calm, 1.0, &defaults));
	CHECK_INT(strikes, 0);
	CHECK(!crowding_sample(&strikes, 0.57, 0.34, &home, 1.0, &defaults));
	CHECK(!crowding_sample(&strikes, -1, 0.34, &home, 1.0, &defaults));
	CHECK_INT(strikes, 0);
}

static void crowded_wait_0_never_moves(void) {
	struct crowding_options never = { 0, 1 };
	struct crowding_ccx home = { .cpus = 1, .taken = 1 };
	unsigned strikes = 0;

	CHECK(!crowding_sample(&strikes, 0.9, 0.0, &home, 1.0, &never));
}

static void one_sample_suffices_when_asked(void) {
	struct crowding_options quick = { 0.15, 1 };
	struct crowding_ccx home = { .cpus = 8, .taken = 7.5 };
	unsigned strikes = 0;

	CHECK(crowding_sample(&strikes, 0.3, 0.1, &home, 1.0, &quick));
}

/* The CCX with the most room other than home, if it holds the demand. */
static void it_goes_where_there_is_room(void) {
	struct crowding_ccx ccx[] = {
		{ .cpus = 8, .taken = 7.5 }, { .cpus = 8, .taken = 6.0 }, { .cpus = 8, .taken = 2.5 }, { .cpus = 0 },
	};

	CHECK_INT(crowding_target(ccx, 4, 0, 2.0), 2);
	CHECK_INT(crowding_target(ccx, 4, 2, 2.0), 1);
	CHECK_INT(crowding_target(ccx, 4, 0, 6.0), -1);   /* none has 6 CPUs free */
	CHECK_INT(crowding_target(ccx, 4, 2, 3.0), -1);   /* not home, and not an unusable one */
}

static void two_one_cpu_ccxs(void) {
	struct crowding_ccx ccx[] = { { .cpus = 1, .taken = 1.0 }, { .cpus = 1, .taken = 0.03 } };

	CHECK_INT(crowding_target(ccx, 2, 0, 1.0), 1);
	ccx[1].taken = 0.55;   /* both crowded: back to its own placement */
	CHECK_INT(crowding_target(ccx, 2, 0, 1.0), -1);
}

/* A program that may spill goes to the nearest CCX with room for what its
 * own lacks, not to the one with most room: its cache and memory are
 * closer there. */
static void a_spill_goes_to_the_nearest_ccx_with_room(void) {
	struct crowding_ccx ccx[] = {
		{ .cpus = 8, .taken = 8.0 },                   /* home, full */
		{ .cpus = 8, .taken = 7.0, .distance = 0 },    /* same node, 1 CPU free */
		{ .cpus = 8, .taken = 1.0, .distance = 1 },    /* same package, 7 free */
		{ .cpus = 8, .taken = 0.0, .distance = 2 },    /* other package, all free */
	};

	/* Home lacks 1.5 CPUs of a demand of 2.5: the same node has room for 1.25. */
	CHECK_INT(crowding_spill_target(ccx, 4, 0, 2.5), 2);
	CHECK_INT(crowding_spill_target(ccx, 4, 0, 1.0), 1);
	ccx[2].taken = 8.0;
	CHECK_INT(crowding_spill_target(ccx, 4, 0, 2.5), 3);
	ccx[3].taken = 8.0;
	CHECK_INT(crowding_spill_target(ccx, 4, 0, 2.5), -1);
	/* Two one-CPU CCXs, a busy program and a program a hand pinned on CPU 1. */
	struct crowding_ccx two[] = { { .cpus = 1, .taken = 0.03, .distance = 0 }, { .cpus = 1, .taken = 0.5 } };
	CHECK_INT(crowding_spill_target(two, 2, 1, 1.0), 0);
	two[0].taken = 1.0;
	CHECK_INT(crowding_spill_target(two, 2, 1, 1.0), -1);
}

static void distances(void) {
	CHECK_INT(crowding_distance(0, 0, 0, 0), 0);
	CHECK_INT(crowding_distance(0, 0, 1, 0), 1);
	CHECK_INT(crowding_distance(0, 0, 1, 1), 2);
	CHECK_INT(crowding_distance(-1, 0, -1, 0), 1);   /* NUMA not known */
	CHECK_INT(crowding_distance(-1, -1, -1, -1), 2);
}

/* A spilled program comes back once its own CCX, counted without it, has
 * room for it crowded_samples in a row; a sample without room starts the
 * count again. */
static void it_comes_back_when_there_is_room(void) {
	struct crowding_ccx crowded = { .cpus = 1, .taken = 1.0 }, free = { .cpus = 1, .taken = 0.05 };
	unsigned streak = 0;

	CHECK(!crowding_room_again(&streak, &crowded, 1.0, &defaults));
	CHECK(!crowding_room_again(&streak, &free, 1.0, &defaults));
	CHECK(!crowding_room_again(&streak, &free, 1.0, &defaults));
	CHECK(!crowding_room_again(&streak, &crowded, 1.0, &defaults));
	CHECK_INT(streak, 0);
	for (int i = 0; i < 2; i++)
		CHECK(!crowding_room_again(&streak, &free, 1.0, &defaults));
	CHECK(crowding_room_again(&streak, &free, 1.0, &defaults));
}

/* The base is what it did alone: window samples, their medians; a sample
 * whose waits were not read is not kept; the window is bounded. */
static void the_base_is_measured_alone_first(void) {
	struct crowding_alone a = { .n = 0 };
	double base = -1, need = -1;

	CHECK(!crowding_alone_add(&a, 3, 0.10, 0.8, &base, &need));
	CHECK(!crowding_alone_add(&a, 3, -1, 0.9, &base, &need));   /* not known: not kept */
	CHECK(!crowding_alone_add(&a, 3, 0.30, 1.0, &base, &need));
	CHECK(!crowding_alone_add(&a, 3, 0.20, 0.6, &base, &need));   /* the third: still not judged */
	CHECK(base == -1 && need == -1);
	CHECK(crowding_alone_add(&a, 3, 0.90, 0.1, &base, &need));
	CHECK(base == 0.20 && need == 0.8);
	CHECK_INT((int)a.n, 3);   /* what came after is judged, not kept */
	/* Window 0 (a program spilled already): the base it had. */
	CHECK(crowding_alone_add(&a, 0, 0.5, 0.5, &base, &need) && base == 0.20);
	/* However large the window asked for, at most CROWDING_ALONE_MAX. */
	a.n = 0;
	for (int i = 0; i < CROWDING_ALONE_MAX; i++)
		CHECK(!crowding_alone_add(&a, 1000, 0.1, 0.1, &base, &need));
	CHECK(crowding_alone_add(&a, 1000, 0.1, 0.1, &base, &need));
}

/* Each CCX's CPUs and the load measured on them, as busy and as taken,
 * before a caller takes off its own: a Ryzen 7 1800X (CCX 0: 0-3,8-11). */
static void each_ccx_with_its_load(void) {
	struct topology *t = test_topology_file("amd-ryzen7-1800x.xml");
	double cpu_load[16] = { [0] = 1.0, [8] = 0.5, [4] = 0.25 };
	struct crowding_ccx *c;

	if (!t)
		return;
	c = crowding_ccxs(t, cpu_load, 16);
	CHECK(c && c[0].cpus == 8 && c[0].busy == 1.5 && c[0].taken == 1.5);
	CHECK(c && c[1].cpus == 8 && c[1].busy == 0.25 && c[1].taken == 0.25 && c[1].distance == 0);
	free(c);
	/* No reading: no load. */
	c = crowding_ccxs(t, NULL, 0);
	CHECK(c && c[0].busy == 0 && c[1].taken == 0 && c[1].cpus == 8);
	free(c);
	topology_free(t);
}

TEST_MAIN(T(each_ccx_with_its_load), T(the_base_is_measured_alone_first), T(a_pair_alone_is_not_crowded), T(waiting_for_each_other_is_not_crowding), T(a_sustained_crowd_is_noticed),
	  T(a_full_ccx_has_no_room), T(a_short_crowd_is_not), T(crowded_wait_0_never_moves), T(one_sample_suffices_when_asked),
	  T(it_goes_where_there_is_room), T(two_one_cpu_ccxs), T(a_spill_goes_to_the_nearest_ccx_with_room),
	  T(distances), T(it_comes_back_when_there_is_room))
