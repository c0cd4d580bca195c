#include "priority.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

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
static volatile sig_atomic_t rt_exceeded;   /* SIGXCPU came */
static uint64_t exceeded;       /* how many */
static uint64_t last_exceeded_usec, backoff_usec, off_until_usec;   /* CLOCK_MONOTONIC */
static char backoff_why[160];
static struct rlimit rt_limit;  /* RLIMIT_RTTIME as set at start */

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
	getrlimit(RLIMIT_RTTIME, &rt_limit);
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

/* The kernel's soft limit on real-time CPU time without a sleep: leave
 * real time at once, before the hard limit's SIGKILL. Only a system call
 * here; priority_wait() does the rest. */
static void on_sigxcpu(int sig) {
	int saved = errno;

	(void)sig;
	syscall(SYS_sched_setattr, 0, &work, 0);
	rt_exceeded = 1;
	errno = saved;
}

static int catch_sigxcpu(char *why, size_t why_size) {
	struct sigaction sa = { .sa_handler = on_sigxcpu, .sa_flags = SA_RESTART };
	sigset_t set;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGXCPU);
	if (sigaction(SIGXCPU, &sa, NULL) < 0 || sigprocmask(SIG_UNBLOCK, &set, NULL) < 0) {
		int r = -errno;
		snprintf(why, why_size, "SIGXCPU cannot be caught (%s)", strerror(-r));
		return r;
	}
	return 0;
}

/* After a SIGXCPU: normal priority for a while, and the soft limit, which
 * the kernel raised by a second as it sent the signal, back where it was. */
static void back_off(void) {
	uint64_t now = util_usec(CLOCK_MONOTONIC);

	rt_exceeded = 0;
	at_rt = false;
	exceeded++;
	if (last_exceeded_usec && now - last_exceeded_usec < PRIORITY_BACKOFF_MAX_USEC && backoff_usec)
		backoff_usec = backoff_usec * 2 > PRIORITY_BACKOFF_MAX_USEC ? PRIORITY_BACKOFF_MAX_USEC : backoff_usec * 2;
	else
		backoff_usec = PRIORITY_BACKOFF_FIRST_USEC;
	last_exceeded_usec = now;
	off_until_usec = now + backoff_usec;
	if (setrlimit(RLIMIT_RTTIME, &rt_limit) < 0)
		log_warning_errno(-errno, "Failed to set the limit on real-time CPU time again: %m");
	snprintf(backoff_why, sizeof(backoff_why),
		 "it ran %u ms at real-time priority without sleeping (SIGXCPU, %llu times): waiting at normal priority",
		 PRIORITY_RTTIME_SOFT_USEC / 1000, (unsigned long long)exceeded);
	log_warning("ccxd ran %u ms at real-time priority without sleeping (SIGXCPU): waiting at normal priority "
		    "for %llu s", PRIORITY_RTTIME_SOFT_USEC / 1000, (unsigned long long)(backoff_usec / 1000000));
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
	if (s->realtime == 0)
		s->realtime = catch_sigxcpu(s->realtime_why, sizeof(s->realtime_why));
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

	if (rt_exceeded)
		back_off();
	if (!may_wait_rt || !wanted || at_rt || util_usec(CLOCK_MONOTONIC) < off_until_usec)
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

	if (rt_exceeded)
		back_off();
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
	struct priority_state st = { .slice_usec = setup.slice == 0 ? PRIORITY_SLICE_USEC : 0, .rttime_exceeded = exceeded };
	uint64_t now = util_usec(CLOCK_MONOTONIC);

	if (now < off_until_usec)
		st.backoff_left_usec = off_until_usec - now;
	if (setup.slice == 1)
		st.wait = "chosen";
	else if (!may_wait_rt)
		st.wait = "normal", st.note = setup.realtime_why;
	else if (!wanted)
		st.wait = "normal", st.note = "realtime_wait = no";
	else if (st.backoff_left_usec)
		st.wait = "normal", st.note = backoff_why;
	else
		st.wait = "real-time";
	return st;
}
