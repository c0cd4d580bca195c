#include "priority.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

/* The uapi struct sched_attr, which glibc 2.36 does not declare; the
 * first version of it (48 bytes) is all that is set here. */
struct sched_attr_v1 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;   /* SCHED_OTHER, Linux 6.12 and later: the slice, in ns */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#define RESET_ON_FORK 0x01  /* SCHED_FLAG_RESET_ON_FORK */

static struct sched_attr_v1 work;   /* ccxd's normal policy, with its slice */
static struct sched_attr_v1 waiting = {
	.size = sizeof(waiting),
	.sched_policy = SCHED_FIFO,
	.sched_flags = RESET_ON_FORK,
	.sched_priority = 1,
};
static struct priority_setup setup;
static bool may_wait_rt;        /* the kernel lets ccxd */
static bool wanted = true;      /* realtime_wait */
static bool at_rt;

static int get_attr(struct sched_attr_v1 *ret) {
	*ret = (struct sched_attr_v1){ .size = 0 };
	return syscall(SYS_sched_getattr, 0, ret, sizeof(*ret), 0) < 0 ? -errno : 0;
}

static int set_attr(struct sched_attr_v1 *a) {
	return syscall(SYS_sched_setattr, 0, a, 0) < 0 ? -errno : 0;
}

static int shorten_slice(char *why, size_t why_size) {
	struct sched_attr_v1 got;
	int r;

	work.sched_runtime = PRIORITY_SLICE_USEC * 1000ULL;
	r = set_attr(&work);
	if (r < 0) {
		work.sched_runtime = 0;   /* the kernel's default */
		snprintf(why, why_size, "the kernel refused it (%s)", strerror(-r));
		return r;
	}
	/* Kernels before 6.12 take sched_runtime for SCHED_OTHER and ignore it;
	 * a slice of its own is read back only where there is one. */
	r = get_attr(&got);
	if (r < 0) {
		snprintf(why, why_size, "it cannot be read back (%s)", strerror(-r));
		return r;
	}
	if (got.sched_runtime != work.sched_runtime) {
		snprintf(why, why_size, "this kernel has no slices of a task's own (Linux 6.12 and later have)");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Real time only with the kernel's stop for a ccxd that would not sleep:
 * one set by the unit (LimitRTTIME=) is kept if no longer than ours. */
static int limit_rt_time(char *why, size_t why_size) {
	struct rlimit rl;

	if (getrlimit(RLIMIT_RTTIME, &rl) < 0) {
		int r = -errno;
		snprintf(why, why_size, "its limit on real-time CPU time cannot be read (%s)", strerror(-r));
		return r;
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= PRIORITY_RTTIME_SOFT_USEC &&
	    rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= PRIORITY_RTTIME_HARD_USEC)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > PRIORITY_RTTIME_HARD_USEC)
		rl.rlim_max = PRIORITY_RTTIME_HARD_USEC;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > PRIORITY_RTTIME_SOFT_USEC)
		rl.rlim_cur = PRIORITY_RTTIME_SOFT_USEC;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_RTTIME, &rl) < 0) {
		int r = -errno;
		snprintf(why, why_size, "no limit on its real-time CPU time can be set (%s; LimitRTTIME= in a unit sets one)",
			 strerror(-r));
		return r;
	}
	return 0;
}

static int try_rt(char *why, size_t why_size) {
	int r = limit_rt_time(why, why_size);

	if (r < 0)
		return r;
	r = set_attr(&waiting);
	if (r < 0) {
		snprintf(why, why_size, "the kernel refused SCHED_FIFO (%s: a system call filter, neither CAP_SYS_NICE "
			 "nor RLIMIT_RTPRIO, or a cgroup without real-time runtime)", strerror(-r));
		return r;
	}
	r = set_attr(&work);
	if (r < 0) {
		/* Stuck at real time: the limit above still holds. */
		snprintf(why, why_size, "its normal policy cannot be set again (%s)", strerror(-r));
		log_error("Failed to leave real-time priority: %s", why);
		return r;
	}
	return 0;
}

static void set_up(struct priority_setup *s) {
	int r = get_attr(&work);

	if (r < 0) {
		s->slice = s->realtime = r;
		snprintf(s->slice_why, sizeof(s->slice_why), "its scheduling cannot be read (%s)", strerror(-r));
		_Static_assert(sizeof(s->realtime_why) == sizeof(s->slice_why), "same size");
		memcpy(s->realtime_why, s->slice_why, sizeof(s->realtime_why));
		return;
	}
	/* Another policy was chosen for ccxd (chrt, CPUSchedulingPolicy=): a
	 * real-time one preempts anyway, and SCHED_IDLE is meant. */
	if (work.sched_policy != SCHED_OTHER && work.sched_policy != SCHED_BATCH) {
		s->slice = s->realtime = 1;
		return;
	}
	work.size = sizeof(work);
	work.sched_flags = RESET_ON_FORK;
	s->slice = shorten_slice(s->slice_why, sizeof(s->slice_why));
	s->realtime = try_rt(s->realtime_why, sizeof(s->realtime_why));
	may_wait_rt = s->realtime == 0;
}

void priority_setup(struct priority_setup *ret) {
	set_up(&setup);
	*ret = setup;
}

void priority_allow(bool want) {
	wanted = want;
	if (!wanted)
		priority_work();
}

void priority_wait(void) {
	int r;

	if (!may_wait_rt || !wanted || at_rt)
		return;
	r = set_attr(&waiting);
	if (r < 0) {
		/* Allowed at start, refused now (a cgroup without real-time
		 * runtime, say): normal priority from now on. */
		log_warning_errno(r, "Failed to wait at real-time priority, waiting at normal priority from now on: %m");
		setup.realtime = r;
		snprintf(setup.realtime_why, sizeof(setup.realtime_why), "the kernel refused SCHED_FIFO after the start (%s)",
			 strerror(-r));
		may_wait_rt = false;
		return;
	}
	at_rt = true;
}

void priority_work(void) {
	int r;

	if (!at_rt)
		return;
	r = set_attr(&work);
	if (r < 0) {
		/* RLIMIT_RTTIME still stops a ccxd that would not sleep. */
		log_error_errno(r, "Failed to leave real-time priority, which is not asked for again: %m");
		setup.realtime = r;
		snprintf(setup.realtime_why, sizeof(setup.realtime_why), "its normal policy could not be set again (%s)",
			 strerror(-r));
		may_wait_rt = false;
	}
	at_rt = false;
}

struct priority_state priority_state(void) {
	struct priority_state st = { .slice_usec = setup.slice == 0 ? PRIORITY_SLICE_USEC : 0 };

	if (setup.slice == 1)
		st.wait = "chosen";
	else if (!may_wait_rt)
		st.wait = "normal", st.note = setup.realtime_why;
	else if (!wanted)
		st.wait = "normal", st.note = "realtime_wait = no";
	else
		st.wait = "real-time";
	return st;
}
