/* Was a move worth it? Every automatic placement is an experiment: the
 * group's rate in a window before against a window after. Pure functions. */
#pragma once

#include <stddef.h>

/* The least gain a move must show to be kept: 5 %, about the spread of a
 * steady pipeline's rate from one second to the next on an idle machine. */
#define VALIDATOR_DEFAULT_MIN_GAIN 0.05

enum validator_verdict {
	VALIDATOR_KEEP,
	VALIDATOR_REVERT,
};

struct validator_evidence {
	double before, after;      /* medians, bytes/s */
	double gain;               /* after / before - 1 */
	double noise;              /* relative spread of the before window, for people */
};

double validator_median(const double *v, size_t n);

/* Keeps a move when the median rate after it beats the median before by
 * more than min_gain, and every sample after it beats every sample before
 * it. That second test is the noise's: two windows of 3 samples from one
 * unchanged rate come out apart that way only 1 time in 20 (a one-sided
 * rank test at 5 %), whatever the rate's distribution. An empty window
 * reverts. */
enum validator_verdict validator_judge(const double *before, size_t n_before, const double *after, size_t n_after,
				       double min_gain, struct validator_evidence *evidence);
