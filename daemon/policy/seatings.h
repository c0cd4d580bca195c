/* What the probe's figures say about the seatings of a group: which to try
 * first, and whether any is worth a move on this machine. Pure: the probe
 * results and the configured order in, the ranking out. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "placer.h"
#include "probe.h"

/* The order seatings are tried in when the configuration names none. */
#define SEATINGS_DEFAULT_N 3
extern const enum seating seatings_default[SEATINGS_DEFAULT_N];

struct seatings_figure {
	bool measured;
	int relation;              /* enum probe_relation it was measured as */
	double gib_s, min, max;    /* pipe throughput, large writes: median and spread */
};

struct seatings_ranking {
	enum seating order[_SEATING_MAX];      /* the seatings allowed, best measured first */
	size_t n_order;
	struct seatings_figure seating[_SEATING_MAX];   /* by enum seating */
	struct seatings_figure apart;   /* the farthest relation measured: a group left alone */
	bool no_gain;              /* no seating differs from apart beyond the spreads: no moves */
	char date[32];             /* when the figures were measured */
	char note[320];            /* the decision, citing the figures */
};

/* Ranks the seatings allowed (n == 0: the default order) by r's pipe
 * throughput: one goes before another only where every repeat of its figure
 * beat every repeat of the other's (its min above the other's max); else the
 * given order stands. no_gain when no measured seating differs from apart
 * beyond both spreads, whichever way: then where a group sits does not
 * matter on this machine. Pure. Returns 0, or -ENODATA when r measured none
 * of the seatings (the given order stands, no_gain is false). */
int seatings_rank(const struct probe_results *r, const enum seating *allowed, size_t n,
		  struct seatings_ranking *ret);
