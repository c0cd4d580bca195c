/* ccxd's own scheduling, so that a pin at exec does not wait for a program
 * that computes on the CPU ccxd is woken on.
 *
 * At an exec the kernel wakes ccxd on the CPU of the program that just
 * started, and a program that computes at once does not sleep. The
 * scheduler (EEVDF) protects the slice of the task that runs until it is
 * used up, so ccxd, and the pin, waited up to a timer tick (4 ms at
 * HZ=250). Two things shorten that wait:
 *
 * - the shortest time slice for ccxd (Linux 6.12 and later: a task woken
 *   with a shorter slice than the current one may preempt it). ccxd sleeps
 *   almost always, so this changes when it runs, not how much CPU it gets;
 * - real-time priority (SCHED_FIFO 1) while ccxd waits, and while it pins
 *   what the exec record it was woken for names: a woken real-time task
 *   preempts any normal one at once. ccxd raises it only where nothing is
 *   ready and it is about to sleep, so the kernel sees it sleep at every
 *   raise; everything else (the decision on that process, other records,
 *   the interval's sampling, clients, reloads) runs at its normal policy.
 *   RLIMIT_RTTIME bounds a bug: the kernel sends SIGXCPU to a ccxd that ran
 *   this long at real-time priority without sleeping. ccxd catches it,
 *   leaves real time at once (before the hard limit's SIGKILL) and waits at
 *   its normal policy for a while that doubles at each hit.
 *
 * The ways considered, and their risks, are in ccxd(8). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The slice asked for: the kernel's least (0.1 ms). */
#define PRIORITY_SLICE_USEC 100
/* RLIMIT_RTTIME, soft (SIGXCPU) and hard (SIGKILL): CPU time at real-time
 * priority without a sleep. A real-time turn takes well under a
 * millisecond: PRIORITY_RT_RECORDS pins at about 0.1 ms each. */
#define PRIORITY_RTTIME_SOFT_USEC 100000
#define PRIORITY_RTTIME_HARD_USEC 200000
/* The exec records read in one real-time turn; the rest wait for the
 * normal dispatch, a moment later. */
#define PRIORITY_RT_RECORDS 1
/* After a SIGXCPU, real time waits this long, doubled at each hit that
 * follows within PRIORITY_BACKOFF_MAX_USEC of the last, up to it. */
#define PRIORITY_BACKOFF_FIRST_USEC 1000000ULL
#define PRIORITY_BACKOFF_MAX_USEC (300 * 1000000ULL)

struct priority_setup {
	/* 0 when shortened, 1 when left to a policy chosen for ccxd (chrt,
	 * CPUSchedulingPolicy=), or -errno where the kernel refuses or has no
	 * slices of a task's own, and ccxd runs with its default. */
	int slice;
	char slice_why[160];
	/* 0 when ccxd may wait at real-time priority, 1 when a policy was
	 * chosen for ccxd, or -errno where it may not (RestrictRealtime=, no
	 * CAP_SYS_NICE nor RLIMIT_RTPRIO, no RLIMIT_RTTIME to be had). */
	int realtime;
	char realtime_why[160];
};

/* At start, before anything is forked (what ccxd forks starts with the
 * kernel's defaults: its slice, SCHED_OTHER, nice 0 if ccxd's is below):
 * shortens the slice and finds out whether ccxd may wait at real-time
 * priority. Leaves ccxd at its normal policy. */
void priority_setup(struct priority_setup *ret);

/* Whether real time is wanted (realtime_wait in ccxd.conf): at start and
 * at each reload. */
void priority_allow(bool wanted);

/* Before ccxd blocks for its next event: real-time priority, where
 * priority_setup() found it may, it is wanted, and no SIGXCPU has put it
 * off (which this notes and says in the journal). */
void priority_wait(void);

/* Once what ccxd was woken for at real-time priority is done: back to its
 * normal policy, with its slice. Cheap when already there. */
void priority_work(void);

/* What ccxd's scheduling is, for status. */
struct priority_state {
	unsigned slice_usec;      /* its own slice; 0: the kernel's default */
	const char *wait;         /* "real-time", "normal" or "chosen" */
	const char *note;         /* why not real time; NULL */
	uint64_t rttime_exceeded; /* SIGXCPUs: the kernel's limit reached */
	uint64_t backoff_left_usec; /* real time is off for this long yet */
};
struct priority_state priority_state(void);
