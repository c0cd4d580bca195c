/* The seating order that the probe's figures give (seatings_rank(), pure):
 * figures from real machines in, the order, no_gain and the note out. */
#include <errno.h>
#include <string.h>

#include "seatings.h"
#include "test.h"

#define REL(r, a, b, med, lo, hi) \
	{ .relation = (r), .cpu = { (a), (b) }, .pipe_gib_s = { (med), (lo), (hi), 3 }, \
	  .pipe_small_mib_s = { 100, 90, 110, 3 }, .latency_ns = { 40, 38, 45, 3 } }

static void shared_cpu_first_where_it_clearly_wins(void) {
	/* yes | pv on the development machines: one CPU far ahead */
	struct probe_results r = { .date = "d", .n_relations = 2,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 4.8, 4.7, 5.0),
						  REL(PROBE_SAME_CCX, 0, 1, 2.0, 1.8, 2.2) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, NULL, 0, &p), 0);
	CHECK_INT((int)p.n_order, 3);
	CHECK_INT(p.order[0], SEATING_SHARED);
	CHECK_INT(p.order[1], SEATING_SMT);   /* not measured: keeps its place */
	CHECK_INT(p.order[2], SEATING_CORES);
	CHECK(!p.no_gain);
	CHECK(p.seating[SEATING_SHARED].measured && p.seating[SEATING_SHARED].gib_s == 4.8);
	CHECK(!p.seating[SEATING_SMT].measured);
	CHECK_INT(p.apart.relation, PROBE_SAME_CCX);
	CHECK(strstr(p.note, "shared-cpu 4.80 GiB/s (4.70-5.00)") != NULL);
}

static void overlapping_spreads_keep_the_given_order(void) {
	struct probe_results r = { .date = "d", .n_relations = 3,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 2.3, 1.7, 2.9),
						  REL(PROBE_SAME_CCX, 0, 1, 2.0, 1.8, 2.2),
						  REL(PROBE_CROSS_CCX, 0, 8, 1.0, 0.9, 1.1) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, NULL, 0, &p), 0);
	CHECK_INT(p.order[0], SEATING_CORES);
	CHECK_INT(p.order[2], SEATING_SHARED);
	/* both beat the other CCX: co-location pays */
	CHECK(!p.no_gain);
	CHECK_INT(p.apart.relation, PROBE_CROSS_CCX);
}

static void no_difference_beyond_noise_is_no_gain(void) {
	struct probe_results r = { .date = "d", .n_relations = 3,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 1.0, 0.8, 1.3),
						  REL(PROBE_SAME_CCX, 0, 1, 1.1, 0.9, 1.2),
						  REL(PROBE_CROSS_CCX, 0, 8, 1.05, 0.95, 1.15) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, NULL, 0, &p), 0);
	CHECK(p.no_gain);
	CHECK(strstr(p.note, "not moved") != NULL);
	CHECK(strstr(p.note, "apart 1.05 GiB/s (0.95-1.15)") != NULL);
}

static void a_clear_loss_is_not_no_gain(void) {
	/* the copying reader here: one CPU is slower than two, beyond noise;
	 * where a group sits matters, so the policy stays on */
	struct probe_results r = { .date = "d", .n_relations = 2,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 1.5, 1.2, 1.9),
						  REL(PROBE_SAME_CCX, 0, 1, 4.5, 4.3, 5.0) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, NULL, 0, &p), 0);
	CHECK(!p.no_gain);
	CHECK_INT(p.order[0], SEATING_CORES);
	CHECK_INT(p.order[2], SEATING_SHARED);
}

static void only_allowed_seatings_are_ranked(void) {
	const enum seating allowed[] = { SEATING_CORES, SEATING_SHARED };
	struct probe_results r = { .date = "d", .n_relations = 2,
				   .relations = { REL(PROBE_SAME_CPU, 0, 0, 4.8, 4.7, 5.0),
						  REL(PROBE_SAME_CCX, 0, 1, 2.0, 1.8, 2.2) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, allowed, 2, &p), 0);
	CHECK_INT((int)p.n_order, 2);
	CHECK_INT(p.order[0], SEATING_SHARED);
	CHECK_INT(p.order[1], SEATING_CORES);
}

static void figures_without_seatings_change_nothing(void) {
	const enum seating allowed[] = { SEATING_SMT, SEATING_CORES };
	struct probe_results r = { .date = "d", .n_relations = 1,
				   .relations = { REL(PROBE_CROSS_CCX, 0, 1, 1.0, 0.9, 1.1) } };
	struct seatings_ranking p;

	CHECK_INT(seatings_rank(&r, allowed, 2, &p), -ENODATA);
	CHECK_INT(p.order[0], SEATING_SMT);
	CHECK_INT(p.order[1], SEATING_CORES);
	CHECK(!p.no_gain);
}

TEST_MAIN(T(shared_cpu_first_where_it_clearly_wins), T(overlapping_spreads_keep_the_given_order),
	  T(no_difference_beyond_noise_is_no_gain), T(a_clear_loss_is_not_no_gain),
	  T(only_allowed_seatings_are_ranked), T(figures_without_seatings_change_nothing))
