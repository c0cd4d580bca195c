/* Small helpers that every part needs: clocks in microseconds and the
 * comparison of pids for qsort() and bsearch(). */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* clock (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_PROCESS_CPUTIME_ID...) now,
 * in microseconds. */
static inline uint64_t util_usec(clockid_t clock) {
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* For qsort() and bsearch() of pid_t arrays (tids too). */
static inline int util_compare_pid(const void *a, const void *b) {
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}
