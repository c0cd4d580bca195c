/* How much room each CCX has for a group the automatic policy places: the
 * CPU load the last sample measured on its CPUs, less what the groups that
 * ccxd seated there used, which count by their demand instead, and the
 * CPUs those groups hold. It counts; the placer and the crowding policy
 * decide (placer.h, crowding.h). Pure: the groups come as room_group, a
 * view of the few fields it reads. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "crowding.h"
#include "groups.h"
#include "placer.h"
#include "sample.h"
#include "topology.h"

/* A group as the room sees it. */
struct room_group {
	const struct group *group;   /* its members, their demand */
	int ccx;                     /* where it sits, -1 nowhere */
	bool seated;                 /* seated (or, in dry-run, decided): its demand counts where it sits */
	cpu_set_t cpus;              /* the CPUs it holds there */
};

/* What a group's room is counted from. */
struct room_view {
	const struct topology *t;
	const struct sampler_result *sample;   /* the last; NULL before the first */
	const struct room_group *groups;       /* every group the policy follows */
	size_t n_groups;
	size_t self;                           /* the one being placed, an index into groups */
};

/* The CPUs of ccx that the seated groups other than self hold. */
void room_taken_on(const struct room_view *v, int ccx, cpu_set_t *taken);

/* Each member's busy threads in the last sample, for its seating (0 for one
 * gone quiet); to be freed; NULL without memory. */
unsigned *room_threads(const struct room_view *v, const struct group *grp);

/* The CCX for self seated s (placer_group_ccx()), with room counted after
 * every other group that sits somewhere, in CPUs and in the cores the
 * seating needs free, and balanced against other programs' load; and the
 * CPUs those groups hold there (taken), which the seating avoids. -1 when
 * none has room. */
int room_choose_ccx(const struct room_view *v, enum seating s, const unsigned *threads, cpu_set_t *taken);

/* Each CCX as self's seat sees it, for the crowding policy: its CPUs, the
 * other work there (other programs' load, and the demand of the groups
 * seated there), and all the work measured there. NULL without memory. */
struct crowding_ccx *room_around(const struct room_view *v);
