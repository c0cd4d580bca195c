/* How much room each CCX has for a group the automatic policy places: the
 * CPU load the last sample measured on its CPUs, less what the groups that
 * ccxd seated there used, which count by their demand instead, and the
 * CPUs those groups hold. It reads; the placer and the crowding policy
 * decide (placer.h, crowding.h). */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "autoplace.h"

/* What a group's room is counted from. */
struct room_view {
	const struct topology *t;
	const struct sampler_result *sample;   /* the last; NULL before the first */
	const struct autoplace_group *groups;  /* every group the policy follows */
	size_t n_groups;
};

/* The CPUs of ccx that the seated groups other than g hold. */
void room_taken_on(const struct room_view *v, const struct autoplace_group *g, int ccx, cpu_set_t *taken);

/* Each member's busy threads in the last sample, for its seating (0 for one
 * gone quiet); to be freed; NULL without memory. */
unsigned *room_threads(const struct room_view *v, const struct group *grp);

/* The CCX for g seated s (placer_group_ccx()), with room counted after
 * every other group that sits somewhere, in CPUs and in the cores the
 * seating needs free, and balanced against other programs' load; and the
 * CPUs those groups hold there (taken), which g's seating avoids. -1 when
 * none has room. */
int room_choose_ccx(const struct room_view *v, const struct autoplace_group *g, enum seating s,
		    const unsigned *threads, cpu_set_t *taken);

/* Each CCX as g's seat sees it, for the crowding policy: its CPUs, the
 * other work there (other programs' load, and the demand of the groups
 * seated there), and all the work measured there. NULL without memory. */
struct crowding_ccx *room_around(const struct room_view *v, const struct autoplace_group *g);
