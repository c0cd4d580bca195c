#include "test.h"
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

TEST_MAIN(T(medians), T(a_small_gain_clear_of_the_noise_is_kept), T(one_overlapping_sample_reverts), T(a_clear_gain_is_kept), T(no_gain_is_reverted), T(a_loss_is_reverted),
	  T(a_gain_inside_the_noise_is_reverted), T(empty_windows_revert))
