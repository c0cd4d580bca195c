/* Puts affinities into the kernel: every thread of a process, through a pidfd
 * that makes sure the pid still names the process ccxd decided about. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens a pidfd for pid and checks that the process behind it started at
 * start_time (so a reused pid is refused with -ESRCH). Returns the fd or -errno. */
int actuator_open(const char *root, pid_t pid, uint64_t start_time);

/* Whether the process behind pidfd has not exited yet. */
bool actuator_alive(int pidfd);

/* Sets mask on every thread of pid, listing its threads again until no new
 * one appears (threads created meanwhile inherit from whoever created them).
 * pidfd must be alive before and after, so every call hit this process.
 * Returns 0, -ESRCH when the process is gone, -EINVAL when the kernel accepts
 * none of mask's CPUs (cgroup cpuset), other -errno. */
int actuator_apply(const char *root, pid_t pid, int pidfd, const cpu_set_t *mask);

/* The same with a mask per thread: threads take masks[*next % n_masks] in
 * turn, *next counting on, so that threads made later continue the rotation.
 * *placed (when not NULL) gets the threads placed (n_placed of them),
 * so that a creation event for a thread placed here already can be told
 * apart; the caller frees it, whatever is returned. */
int actuator_apply_each(const char *root, pid_t pid, int pidfd, const cpu_set_t *masks, size_t n_masks,
			unsigned *next, pid_t **placed, size_t *n_placed);

/* pid's main thread alone, unchecked: for the pin at exec, whose pidfd
 * (opened before it, or after it with the start time the exec record
 * told) is checked when its full decision comes. */
int actuator_apply_main(pid_t pid, const cpu_set_t *mask);

/* One thread of the process behind pidfd, e.g. one that was just created. */
int actuator_apply_thread(int pidfd, pid_t tid, const cpu_set_t *mask);

/* The affinity of the process's main thread. */
int actuator_get(pid_t pid, cpu_set_t *ret);
