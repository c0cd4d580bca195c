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

/* The most samples a window holds. */
#define VALIDATOR_WINDOW_MAX 8
/* The chance that a rate that did not change passes for one that rose. */
#define VALIDATOR_P 0.05

/* Keeps a move when the median rate after it beats the median before by
 * more than min_gain, and a one-sided Mann-Whitney rank test says the
 * samples after it are above those before it at VALIDATOR_P: whatever the
 * rate's distribution, two windows of one unchanged rate come out that far
 * apart at most 1 time in 20. With 3 samples each that takes every sample
 * after above every sample before; with 4, one pair may be the other way
 * round; with 8 each, fifteen may. An empty window reverts; samples past
 * VALIDATOR_WINDOW_MAX are not looked at. */
enum validator_verdict validator_judge(const double *before, size_t n_before, const double *after, size_t n_after,
				       double min_gain, struct validator_evidence *evidence);
