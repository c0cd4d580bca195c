/* The last few hundred delays of one kind, and their percentiles: how long
 * after the kernel's exec event ccxd had pinned the new program, as status
 * shows it. Pure: no clock of its own, so tests give it the numbers. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define LATENCIES_KEPT 256

struct latencies {
	uint32_t usec[LATENCIES_KEPT];    /* a ring: the oldest goes first */
	size_t n, next;
	uint64_t total;                   /* how many were ever added */
};

struct latencies_summary {
	size_t n;                         /* how many the percentiles are of (0: none) */
	uint32_t p50_usec, p90_usec, max_usec;
};

void latencies_add(struct latencies *l, uint64_t usec);
struct latencies_summary latencies_summary(const struct latencies *l);
