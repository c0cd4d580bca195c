/* A share of ccxd's CPU for the work that other users cause at their own
 * rate: the exec records and process events of programs they start. Past
 * its share in a window, that work waits for the next window (the kernel
 * keeps the records, or drops them and ccxd rescans /proc), so that an exec
 * flood costs ccxd a bounded share of a CPU and leaves the rest of the loop
 * (clients, the sampler) its time.
 *
 * Pure: the caller reads the clocks. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct budget {
	uint64_t window_usec;   /* length of a window */
	uint64_t share_usec;    /* CPU the work may use in one */
	uint64_t begin_usec;    /* CLOCK_MONOTONIC: when the current window began */
	uint64_t used_usec;     /* CPU used in it */
	uint64_t spent;       /* windows whose share was used up */
};

void budget_init(struct budget *b, uint64_t window_usec, uint64_t share_usec);

/* At now_usec: whether the current window has share left; a new window
 * begins once the last has passed. */
bool budget_left(struct budget *b, uint64_t now_usec);

/* cpu_usec of work done at now_usec. Counts the window as spent the moment
 * it is. */
void budget_charge(struct budget *b, uint64_t now_usec, uint64_t cpu_usec);

/* When the current window ends: where work waits, it may go on then. */
uint64_t budget_next_usec(const struct budget *b);
