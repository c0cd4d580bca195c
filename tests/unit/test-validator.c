#include <string.h>

#include "test.h"
#include "experiment.h"
#include "validator.h"

static void medians(void) {
	double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };

	CHECK(validator_median(odd, 3) == 2.0);
	CHECK(validator_median(even, 4) == 2.5);
	CHECK(validator_median(NULL, 0) == 0.0);
}

static void a_clear_gain_is_kept(void) {
	/* yes | pv here: about 2 GiB/s apart, 4.8 on one shared CPU */
	double before[] = { 2.0, 2.1, 1.9 }, after[] = { 4.7, 4.9, 4.8 };
	struct validator_evidence e;

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, &e), VALIDATOR_KEEP);
	CHECK(e.before == 2.0 && e.after == 4.8);
	CHECK(e.gain > 1.39 && e.gain < 1.41);
}

static void no_gain_is_reverted(void) {
	double before[] = { 2.0, 2.1, 1.9 }, after[] = { 2.05, 2.0, 2.1 };

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, NULL), VALIDATOR_REVERT);
}

static void a_loss_is_reverted(void) {
	/* cat /dev/urandom | sha256sum: 171 MiB/s unpinned, 134 on one CPU */
	double before[] = { 171, 170, 172 }, after[] = { 134, 135, 133 };
	struct validator_evidence e;

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, &e), VALIDATOR_REVERT);
	CHECK(e.gain < -0.2);
}

static void a_gain_inside_the_noise_is_reverted(void) {
	/* 10 % better, but the before window alone swings by 50 % */
	double before[] = { 80, 100, 130 }, after[] = { 110, 110, 110 };

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, NULL), VALIDATOR_REVERT);
}

static void empty_windows_revert(void) {
	double w[] = { 1, 2, 3 };

	CHECK_INT(validator_judge(w, 3, NULL, 0, 0.05, NULL), VALIDATOR_REVERT);
	CHECK_INT(validator_judge(NULL, 0, w, 3, 0.05, NULL), VALIDATOR_REVERT);
}

static void a_small_gain_clear_of_the_noise_is_kept(void) {
	/* 10 % better, every sample after above every sample before */
	double before[] = { 100, 98, 102 }, after[] = { 110, 109, 112 };

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, NULL), VALIDATOR_KEEP);
	/* but not below min_gain */
	CHECK_INT(validator_judge(before, 3, after, 3, 0.15, NULL), VALIDATOR_REVERT);
}

static void one_overlapping_sample_reverts(void) {
	double before[] = { 100, 98, 111 }, after[] = { 120, 110, 125 };

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, NULL), VALIDATOR_REVERT);
}

/* With more samples, the rank test lets a few pairs be the other way round:
 * at 4 each one pair (p = 2/70), not two (p = 4/70). */
static void four_samples_allow_one_pair_the_other_way(void) {
	double before[] = { 100, 98, 111, 101 }, after[] = { 120, 110, 125, 118 };
	double before2[] = { 100, 98, 111, 112 };

	CHECK_INT(validator_judge(before, 4, after, 4, 0.05, NULL), VALIDATOR_KEEP);
	CHECK_INT(validator_judge(before2, 4, after, 4, 0.05, NULL), VALIDATOR_REVERT);
}

/* At 8 each, fifteen pairs the other way pass (p = 0.041) and sixteen do
 * not (p = 0.052): seven after samples below two of the before samples
 * each, and the last below one, or below two as well. */
static void eight_samples_allow_fifteen_pairs_the_other_way(void) {
	double before[] = { 10, 20, 30, 40, 50, 60, 70, 80 };
	double after[] = { 61, 62, 63, 64, 65, 66, 67, 75 };
	double after16[] = { 61, 62, 63, 64, 65, 66, 67, 68 };

	CHECK_INT(validator_judge(before, 8, after, 8, 0.05, NULL), VALIDATOR_KEEP);
	CHECK_INT(validator_judge(before, 8, after16, 8, 0.05, NULL), VALIDATOR_REVERT);
}

/* A tie is half a pair the other way. */
static void ties_count_half(void) {
	double before[] = { 100, 100, 100 }, after[] = { 100, 130, 120 };

	CHECK_INT(validator_judge(before, 3, after, 3, 0.05, NULL), VALIDATOR_REVERT);
}

static struct experiment_trial trial(enum seating seating, const double *before, size_t n_before, const double *after,
				    size_t n_after) {
	struct experiment_trial t = { .seating = seating, .n_after = n_after };

	memcpy(t.after, after, n_after * sizeof(*after));
	t.beat = validator_judge(before, n_before, after, n_after, 0.05, &t.evidence) == VALIDATOR_KEEP;
	return t;
}

/* A 4 KiB ping-pong here: the scheduler had it on one CPU while the rate
 * before was measured (270 MiB/s), apart it runs at 20; shared-cpu is no
 * faster than before, but keeping it rules out the other. */
static void a_seating_as_fast_as_before_guards_against_a_slower_one(void) {
	double before[] = { 270, 275, 268 }, apart[] = { 20, 19, 21 }, shared[] = { 290, 262, 295 };
	struct experiment_trial t[2] = { trial(SEATING_CORES, before, 3, apart, 3), trial(SEATING_SHARED, before, 3, shared, 3) };

	CHECK(!t[0].beat && !t[1].beat);
	CHECK_INT(experiment_guard(t, 2, before, 3, 0.05), 1);
}

/* The same pair another time: shared-cpu's median is 5 % below the rate
 * before, within the noise (its samples and those before interleave);
 * only a seating clearly slower than before is no guard. */
static void a_seating_slower_only_within_the_noise_guards_too(void) {
	double before[] = { 394, 380, 400 }, apart[] = { 34, 35, 33 }, shared[] = { 373, 395, 360 },
	       below[] = { 373, 371, 372 };
	struct experiment_trial t[2] = { trial(SEATING_CORES, before, 3, apart, 3), trial(SEATING_SHARED, before, 3, shared, 3) };
	struct experiment_trial clear[2] = { trial(SEATING_CORES, before, 3, apart, 3),
					    trial(SEATING_SHARED, before, 3, below, 3) };

	CHECK(t[1].evidence.gain < -0.05);
	CHECK_INT(experiment_guard(t, 2, before, 3, 0.05), 1);
	CHECK_INT(experiment_guard(clear, 2, before, 3, 0.05), -1);
}

/* Two busy processes: twice as fast apart. */
static void apart_is_kept_against_sharing_one_cpu(void) {
	double before[] = { 100, 98, 102 }, shared[] = { 50, 51, 49 }, cores[] = { 101, 99, 103 };
	struct experiment_trial t[2] = { trial(SEATING_SHARED, before, 3, shared, 3), trial(SEATING_CORES, before, 3, cores, 3) };

	CHECK_INT(experiment_guard(t, 2, before, 3, 0.05), 1);
}

static void no_guard_without_a_clearly_slower_seating(void) {
	double before[] = { 100, 98, 102 }, a[] = { 99, 101, 100 }, b[] = { 100, 97, 102 }, noisy[] = { 60, 110, 90 },
	       slow[] = { 80, 81, 79 }, slower[] = { 50, 51, 49 };
	struct experiment_trial same[2] = { trial(SEATING_SHARED, before, 3, a, 3), trial(SEATING_CORES, before, 3, b, 3) };
	struct experiment_trial overlap[2] = { trial(SEATING_SHARED, before, 3, noisy, 3),
					      trial(SEATING_CORES, before, 3, b, 3) };
	struct experiment_trial both_slower[2] = { trial(SEATING_SHARED, before, 3, slow, 3),
						  trial(SEATING_CORES, before, 3, slower, 3) };

	CHECK_INT(experiment_guard(same, 2, before, 3, 0.05), -1);
	CHECK_INT(experiment_guard(overlap, 2, before, 3, 0.05), -1);
	/* The best ran slower than before: keeping it would be a loss. */
	CHECK_INT(experiment_guard(both_slower, 2, before, 3, 0.05), -1);
	/* One seating alone has nothing to guard against. */
	CHECK_INT(experiment_guard(same, 1, before, 3, 0.05), -1);
}

TEST_MAIN(T(a_seating_as_fast_as_before_guards_against_a_slower_one),
	  T(a_seating_slower_only_within_the_noise_guards_too), T(apart_is_kept_against_sharing_one_cpu),
	  T(no_guard_without_a_clearly_slower_seating), T(medians), T(a_small_gain_clear_of_the_noise_is_kept), T(one_overlapping_sample_reverts), T(four_samples_allow_one_pair_the_other_way),
	  T(eight_samples_allow_fifteen_pairs_the_other_way), T(ties_count_half), T(a_clear_gain_is_kept), T(no_gain_is_reverted), T(a_loss_is_reverted),
	  T(a_gain_inside_the_noise_is_reverted), T(empty_windows_revert))
