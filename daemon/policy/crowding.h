/* Whether a seated group's CCX has become crowded, and where it goes then:
 * pure functions of what a sample tells. A group's seat is a hard
 * affinity, so when other work lands on its CPUs the group cannot move
 * away by itself, as a program the kernel placed would. Its members then
 * wait, runnable, for a CPU; that waiting is the evidence, read from their
 * threads' schedstat (waits.h).
 *
 * Members seated on one CPU on purpose wait for each other: a ping-pong
 * pair alone on one CPU waits 34 % of the time it wants a CPU, two busy
 * processes 43 %. So what counts is how much more they wait than they did
 * once seated, by their own share measured then; and the CCX must also be
 * short of CPUs once the other work there is counted. Both must hold for
 * several samples in a row: a compiler that runs for a second is no reason
 * to move. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology.h"
#include "validator.h"

/* Defaults of crowded_wait and crowded_samples (ccxd.conf(5)): one
 * CPU-bound program on a pair's CPU raised its share by 17 to 35 points,
 * and a steady pair's share varies by 3 from one sample to the next
 * (BENCHMARKS.md, "Crowding"). */
#define CROWDING_DEFAULT_WAIT 0.15
#define CROWDING_DEFAULT_SAMPLES 3
/* A CCX has room for a group when its CPUs less its other work, and this
 * much, hold the group's demand: the other programs' load comes from
 * /proc/stat, in clock ticks, and a few ticks' error and a shell's
 * housekeeping come to about this. The other work is counted as what it
 * got, though, and on a CCX left with less idle time than this, it got
 * only what the group left it and wants more: such a CCX has no room,
 * unless the other work there is less than this too (the group fills it
 * by itself). A pinned CPU-bound program and a ping-pong pair on one CPU
 * read 0.46 and 0.54 of it: 0.54 free looked like room for the 0.76 the
 * pair used alone, and it was not. */
#define CROWDING_SLACK 0.25

/* One CCX as a group's seat sees it. */
struct crowding_ccx {
	double cpus;               /* its CPUs; 0 for one that cannot be used */
	double taken;              /* CPUs' worth of other work there: other programs' load, and
				    * the demand of the groups ccxd seated there */
	double busy;               /* CPUs' worth of all the work measured there, the group's own
				    * included; 0 without a reading */
	unsigned distance;         /* from the seat's CCX, for a spill: 0 the same NUMA node, 1 the
				    * same package, 2 farther (crowding_distance()) */
};

/* What a program or group does with its seat to itself: its share of
 * wanted time spent waiting, and the CPUs it used, in its first window
 * samples there. Their medians are what a crowd is judged against (the
 * base, and the demand). */
#define CROWDING_ALONE_MAX VALIDATOR_WINDOW_MAX
struct crowding_alone {
	double waits[CROWDING_ALONE_MAX];
	double cpu[CROWDING_ALONE_MAX];
	unsigned n;
};

struct crowding_options {
	double max_wait;           /* crowded_wait: how much the share of wanted time spent waiting
				    * may grow over the share once seated; 0: never */
	unsigned samples;          /* crowded_samples, in a row */
};

/* One sample of a group seated on home, which needs demand CPUs (as
 * measured when it was seated: what a crowded group gets understates it),
 * and whose members spent the share waited (waits_share(); < 0: not known)
 * of the time they wanted a CPU waiting for one, against base once seated.
 * *strikes counts the crowded samples in a row; returns true once there
 * were o->samples of them. */
bool crowding_sample(unsigned *strikes, double waited, double base, const struct crowding_ccx *home, double demand,
		     const struct crowding_options *o);

/* Where a crowded group goes: of the CCXs other than from that have room
 * for demand, the one with the most (cpus less taken); else -1. */
int crowding_target(const struct crowding_ccx *ccx, size_t n, int from, double demand);

/* A rule's program that may spill (spill = yes in its rule) is pinned to
 * its CCX, and crowded there as a group is (crowding_sample()): then it may
 * use the nearest CCX as well, and the kernel balances it between the two.
 * It comes back when its own CCX has room for it again. */

/* How far CCX b is from a, as crowding_ccx.distance counts. */
unsigned crowding_distance(int numa_a, int package_a, int numa_b, int package_b);

/* Where a crowded program spills: of the CCXs other than from, those with
 * room for what from lacks (demand less from's room), the nearest, then
 * the one with the most room; -1 when none has. */
int crowding_spill_target(const struct crowding_ccx *ccx, size_t n, int from, double demand);

/* One sample of a spilled program's own CCX, home, whose other work is
 * counted without the program: *streak counts the samples in a row with
 * room for its demand there; returns true once there were o->samples. */
bool crowding_room_again(unsigned *streak, const struct crowding_ccx *home, double demand,
			 const struct crowding_options *o);

/* One sample alone (waited < 0: not known, not kept), while fewer than
 * window (at most CROWDING_ALONE_MAX) are kept; true once they were all
 * kept before this one: the crowding may be judged, against *base and
 * *need, their medians. */
bool crowding_alone_add(struct crowding_alone *a, unsigned window, double waited, double used, double *base,
			double *need);

/* Each CCX of t as a seat sees it before the callers count their own: its
 * CPUs (0 for one that cannot be used), and, as busy and as taken alike,
 * the load cpu_load (n_cpus of it; NULL: none) measured on its CPUs. The
 * caller takes off taken the work that is not other work. NULL without
 * memory. */
struct crowding_ccx *crowding_ccxs(const struct topology *t, const double *cpu_load, size_t n_cpus);
