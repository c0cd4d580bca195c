/* CPU lists in the kernel's notation ("0-3,8-11"), to and from cpu_set_t.
 * cpu_set_t (CPU_SETSIZE = 1024 CPUs) is the currency of every CPU set in ccxd:
 * it is what sched_setaffinity takes, and a plain value that policy code and
 * tests can copy and compare. */
#pragma once

#include <sched.h>
#include <stddef.h>

/* Enough for any set of CPU_SETSIZE CPUs in the worst case ("0,2,4,...,1022"). */
#define CPULIST_MAX 4096

/* Parses "0-3,8-11", "5" or "" (the empty set); strides ("0-7:2") are not accepted.
 * Surrounding white space and one trailing newline are allowed.
 * Returns 0, or -EINVAL for malformed lists, -ERANGE for CPUs >= CPU_SETSIZE. */
int cpulist_parse(const char *s, cpu_set_t *ret);

/* Writes the shortest list for set into buf ("" for the empty set) and returns buf.
 * A buffer too small for the whole list gets a truncated list ending in "...". */
char *cpulist_format(const cpu_set_t *set, char *buf, size_t size);

/* The mask as hex, most significant word first, like taskset prints: "f0f". */
char *cpulist_format_hex(const cpu_set_t *set, char *buf, size_t size);

/* Highest CPU in the set, or -1 when empty. */
int cpulist_last(const cpu_set_t *set);

/* true when every CPU of a is also in b */
int cpulist_is_subset(const cpu_set_t *a, const cpu_set_t *b);
