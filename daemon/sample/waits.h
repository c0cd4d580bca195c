/* How long a process's threads ran, and waited runnable for a CPU: their
 * schedstat, summed. What tells a seated group that its CCX is crowded:
 * a thread that waits for a CPU is one that the CPUs it may use cannot
 * serve, whatever the clock ticks say. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

struct waits_times {
	uint64_t run_ns, wait_ns;
};

/* pid's live threads' times now. -ESRCH when it is gone; -ENOENT on a
 * kernel without schedstat (CONFIG_SCHED_INFO). Threads that ended take
 * their times with them: a sum that fell is no reading (waits_share()). */
int waits_read(const char *root, pid_t pid, struct waits_times *ret);

/* The share of the time wanted (ran or waited) between before and now that
 * was spent waiting, summed over several processes' readings; -1 when they
 * wanted none, or a sum fell. */
double waits_share(const struct waits_times *before, const struct waits_times *now);
