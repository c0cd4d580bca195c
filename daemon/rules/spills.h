/* The programs a rule pins that may spill (spill = yes): when other work
 * crowds their CCX, they may use the nearest CCX with room as well, and
 * they come back when their own has room again. A rule's pin is otherwise
 * hard: a program that waits for a CPU on its CCX waits there, where one
 * the kernel placed would move. The evidence is a seated group's
 * (crowding.h): how much more the program waits for a CPU than it did
 * once pinned, and its CCX short of the CPU it used then. */
#pragma once

#include <stdint.h>

#include "config.h"
#include "crowding.h"
#include "placements.h"
#include "sample.h"
#include "topology.h"

struct spills;

struct spills_stats {
	uint64_t spills;          /* times a program spilled */
	uint64_t returns;         /* times one came back */
};

int spills_new(const char *root, struct spills **ret);
void spills_free(struct spills *s);

/* One interval, now_usec on CLOCK_MONOTONIC: watches every process a rule
 * with spill = yes pinned, and spills or brings back through placements.
 * sample gives the CPUs' load (NULL, or none in it: nothing is decided);
 * window is how many samples once pinned measure the program alone. */
void spills_watch(struct spills *s, struct placements *pl, const struct config *c, const struct topology *t,
		  const struct sampler_result *sample, unsigned window, uint64_t now_usec);

struct spills_stats spills_stats(const struct spills *s);
