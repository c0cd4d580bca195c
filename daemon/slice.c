#include "slice.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The uapi struct sched_attr, which glibc 2.36 does not declare; the
 * first version of it (48 bytes) is all that is set here. */
struct slice_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;   /* SCHED_OTHER, Linux 6.12 and later: the slice, in ns */
	uint64_t sched_deadline;
	uint64_t sched_period;
};

#define SLICE_RESET_ON_FORK 0x01  /* SCHED_FLAG_RESET_ON_FORK */

static int get_attr(struct slice_attr *ret) {
	*ret = (struct slice_attr){ .size = 0 };
	return syscall(SYS_sched_getattr, 0, ret, sizeof(*ret), 0) < 0 ? -errno : 0;
}

int slice_shorten(char *why, size_t why_size) {
	struct slice_attr want, got;
	int r = get_attr(&want);

	if (r < 0) {
		snprintf(why, why_size, "its scheduling cannot be read (%s)", strerror(-r));
		return r;
	}
	/* Another policy was chosen for ccxd (chrt, CPUSchedulingPolicy=):
	 * a real-time one preempts anyway, and SCHED_IDLE is meant. */
	if (want.sched_policy != SCHED_OTHER && want.sched_policy != SCHED_BATCH)
		return 1;
	want.size = sizeof(want);
	want.sched_flags = SLICE_RESET_ON_FORK;
	want.sched_runtime = SLICE_USEC * 1000ULL;
	if (syscall(SYS_sched_setattr, 0, &want, 0) < 0) {
		r = -errno;
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
	if (got.sched_runtime != want.sched_runtime) {
		snprintf(why, why_size, "this kernel has no slices of a task's own (Linux 6.12 and later have)");
		return -EOPNOTSUPP;
	}
	return 0;
}
