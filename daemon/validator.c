#include "validator.h"

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

enum validator_verdict validator_judge(const double *before, size_t n_before, const double *after, size_t n_after,
				       double min_gain, struct validator_evidence *e) {
	struct validator_evidence ev = { 0 };

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
	for (size_t i = 0; i < n_after; i++)
		for (size_t k = 0; k < n_before; k++)
			if (after[i] <= before[k])
				return VALIDATOR_REVERT;
	return VALIDATOR_KEEP;
}
