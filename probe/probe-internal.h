/* What the probe's own files share, and nothing outside probe/ uses. */
#pragma once

#include <stdbool.h>

#include "probe.h"

/* The plan's fixed text equal to s (probe-plan.c), so that a plan read back
 * from JSON points at the same static strings as one planned here; "absent"
 * for a text the plan never gives. */
const char *probe_reason_of(const char *s);

/* CLOCK_MONOTONIC in seconds (probe-measure.c). */
double probe_now(void);

/* A figure as a share of the best (probe-ratios.c): 0 when either is none. */
double probe_ratio(double v, double best);
/* The best of a column of r: the highest throughput, the lowest latency, the
 * most frames a second of the codec's patterns that ran. */
double probe_best_pipe(const struct probe_results *r);
double probe_best_latency(const struct probe_results *r);
double probe_best_codec(const struct probe_results *r, bool decode);
