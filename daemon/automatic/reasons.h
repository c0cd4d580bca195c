/* What status says beside each group of the automatic policy: its state
 * in words, with why. A pure function of the group, so that the words can
 * be read in one place and tested without a daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "experiment.h"
#include "groups.h"

/* What the words are made of: the few things the automatic policy knows of
 * a group that its state's reason names. */
struct reasons_group {
	const struct experiment *x;   /* its experiment, and so its state */
	bool seen;                    /* in the last sample */
	unsigned quiet;               /* samples in a row it was not seen */
	int ccx;                      /* decided CCX, -1 if none */
	double demand;                /* the CPUs it needs (groups.h) */
	const char *crowding;         /* why it last moved, or was put back, off a crowded CCX; NULL */
	enum groups_users users;      /* whose processes it holds */
};

/* g's reason into r (size bytes): largest_ccx is the CPUs of the largest
 * CCX, window the samples measured before a move, release_after the
 * samples an unseen group keeps its seat. */
void reasons_of_group(const struct reasons_group *g, double largest_ccx, unsigned window, unsigned release_after,
		      char *r, size_t size);
