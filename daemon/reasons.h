/* What status says beside each group of the automatic policy: its state
 * in words, with why. A pure function of the group, so that the words can
 * be read in one place and tested without a daemon. */
#pragma once

#include <stddef.h>

#include "autoplace.h"

/* g's reason into r (size bytes): largest_ccx is the CPUs of the largest
 * CCX, window the samples measured before a move, release_after the
 * samples an unseen group keeps its seat. */
void reasons_of_group(const struct autoplace_group *g, double largest_ccx, unsigned window, unsigned release_after,
		      char *r, size_t size);
