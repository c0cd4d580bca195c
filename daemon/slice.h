/* ccxd's own time slice. At an exec the kernel wakes ccxd on the CPU of the
 * program that just started (the wake-up is a synchronous one: the waker is
 * expected to sleep), and a program that computes at once does not sleep.
 * The scheduler (EEVDF) protects the slice of the task that runs until it
 * is used up, so ccxd, and the pin, waited up to a timer tick (4 ms at
 * HZ=250). Since Linux 6.12 a task woken with a shorter slice than the
 * current one may preempt it at once. ccxd asks for the shortest slice the
 * kernel allows: it sleeps almost always, so this changes when it runs,
 * not how much CPU it gets (its weight, from its nice value, decides that).
 * Other ways, and why not them, are in ccxd(8). */
#pragma once

#include <stddef.h>

/* The slice asked for: the kernel's least (0.1 ms). */
#define SLICE_USEC 100

/* Sets the calling process's slice to SLICE_USEC, keeping its policy and
 * nice value; what it forks starts again with the kernel's defaults (the
 * default slice, nice 0 if ccxd's is below). A policy other than
 * SCHED_OTHER or SCHED_BATCH, chosen for ccxd on purpose, is left as it
 * is. Returns 0 when shortened, 1 when left as chosen; or -errno, with why for people, when the kernel refuses
 * or has no slices of a task's own (before 6.12), and ccxd runs as
 * before. */
int slice_shorten(char *why, size_t why_size);
