/* Small helpers that every part needs: clocks in microseconds, the
 * comparison of pids for qsort() and bsearch(), arrays that grow, and the
 * names of enum values. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* p, an array of *allocated elements of size bytes, with room for need of
 * them: reallocated to twice as many (16 at first) as often as it takes.
 * NULL when out of memory, and p is left as it was. */
static inline void *util_grow(void *p, size_t *allocated, size_t need, size_t size) {
	size_t n = *allocated ? *allocated : 16;

	if (need <= *allocated)
		return p;
	while (n < need)
		n *= 2;
	p = reallocarray(p, n, size);
	if (p)
		*allocated = n;
	return p;
}

/* How many elements the array a (an array, not a pointer) has. */
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* The name of value in a table of n names indexed by an enum, as
 * { [ENUM_X] = "x", ... }: NULL for a value past the end or a hole. */
static inline const char *util_name_of(const char *const *table, size_t n, unsigned value) {
	return value < n ? table[value] : NULL;
}

#define NAME_OF(table, value) util_name_of((table), ELEMENTSOF(table), (unsigned)(value))

/* The reverse: the index whose name is name, or -EINVAL (NULL names none). */
static inline int util_index_of(const char *const *table, size_t n, const char *name) {
	for (size_t i = 0; name && i < n; i++)
		if (table[i] && strcmp(table[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

#define INDEX_OF(table, name) util_index_of((table), ELEMENTSOF(table), (name))
