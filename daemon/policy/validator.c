#include "validator.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int compare_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double validator_median(const double *v, size_t n) {
	double sorted[64], m;

	if (n == 0)
		return 0.0;
	if (n > sizeof(sorted) / sizeof(sorted[0]))
		n = sizeof(sorted) / sizeof(sorted[0]);
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), compare_double);
	m = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
	return m;
}

static double spread(const double *v, size_t n, double median) {
	double lo = v[0], hi = v[0];

	for (size_t i = 1; i < n; i++) {
		if (v[i] < lo)
			lo = v[i];
		if (v[i] > hi)
			hi = v[i];
	}
	return median > 0 ? (hi - lo) / median : 0.0;
}

/* The one-sided p-value of a Mann-Whitney test that after is above before:
 * the share of all orderings of n_after + n_before samples of one unchanged
 * rate with at most `inversions` pairs where an after sample is not above a
 * before one. count[k] of arrangements with k inversions is built up one
 * sample at a time (the standard recurrence); both windows hold at most
 * VALIDATOR_WINDOW_MAX samples. */
static double p_value(size_t n_after, size_t n_before, unsigned inversions) {
	enum { MAX_U = VALIDATOR_WINDOW_MAX * VALIDATOR_WINDOW_MAX };
	/* ways[a][b][k]: arrangements of a after and b before samples with k inversions */
	static double ways[VALIDATOR_WINDOW_MAX + 1][VALIDATOR_WINDOW_MAX + 1][MAX_U + 1];
	static bool built;
	double at_most = 0, all = 0;

	if (!built) {
		for (size_t a = 0; a <= VALIDATOR_WINDOW_MAX; a++)
			for (size_t b = 0; b <= VALIDATOR_WINDOW_MAX; b++)
				for (size_t k = 0; k <= MAX_U; k++) {
					if (a == 0 || b == 0) {
						ways[a][b][k] = k == 0;
						continue;
					}
					/* The largest sample is an after one (no inversion
					 * with any before) or a before one (one with each after). */
					ways[a][b][k] = ways[a - 1][b][k] + (k >= a ? ways[a][b - 1][k - a] : 0);
				}
		built = true;
	}
	for (size_t k = 0; k <= n_after * n_before; k++) {
		all += ways[n_after][n_before][k];
		if (k <= inversions)
			at_most += ways[n_after][n_before][k];
	}
	return at_most / all;
}

enum validator_verdict validator_judge(const double *before, size_t n_before, const double *after, size_t n_after,
				       double min_gain, struct validator_evidence *e) {
	struct validator_evidence ev = { 0 };
	unsigned half_inversions = 0;

	if (n_before > VALIDATOR_WINDOW_MAX)
		n_before = VALIDATOR_WINDOW_MAX;
	if (n_after > VALIDATOR_WINDOW_MAX)
		n_after = VALIDATOR_WINDOW_MAX;
	if (n_before > 0 && n_after > 0) {
		ev.before = validator_median(before, n_before);
		ev.after = validator_median(after, n_after);
		ev.noise = spread(before, n_before, ev.before);
		ev.gain = ev.before > 0 ? ev.after / ev.before - 1.0 : 0.0;
	}
	if (e)
		*e = ev;
	if (n_before == 0 || n_after == 0 || ev.before <= 0 || ev.gain <= min_gain)
		return VALIDATOR_REVERT;
	/* A tie counts half an inversion, and half a one counts whole. */
	for (size_t i = 0; i < n_after; i++)
		for (size_t k = 0; k < n_before; k++)
			half_inversions += after[i] < before[k] ? 2 : after[i] == before[k] ? 1 : 0;
	return p_value(n_after, n_before, (half_inversions + 1) / 2) <= VALIDATOR_P ? VALIDATOR_KEEP : VALIDATOR_REVERT;
}
