/* ccxd's real-time wait against the kernel's real limit: a ccxd that runs
 * at real-time priority past RLIMIT_RTTIME without sleeping gets SIGXCPU,
 * and must leave real time and live, not die of it (nor of the SIGKILL at
 * the hard limit). Needs CAP_SYS_NICE (root), else skipped. */
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include "priority.h"
#include "test.h"
#include "util.h"

static void spin_usec(uint64_t usec) {
	uint64_t end = util_usec(CLOCK_MONOTONIC) + usec;

	while (util_usec(CLOCK_MONOTONIC) < end)
		;
}

static void the_limit_reached_backs_off_instead_of_killing(void) {
	struct priority_setup ps;
	struct priority_state st;
	uint64_t deadline;

	priority_setup(&ps);
	if (ps.realtime != 0)
		SKIP_TEST("ccxd may not wait at real-time priority here");
	priority_allow(true);
	priority_wait();
	CHECK_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_FIFO);
	/* Never sleeping at real time: the kernel counts the ticks until its
	 * soft limit (100 ms), then SIGXCPU; past the hard one (200 ms), a
	 * SIGKILL would end this test as a crash. */
	deadline = util_usec(CLOCK_MONOTONIC) + 5000000;
	while ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && util_usec(CLOCK_MONOTONIC) < deadline)
		spin_usec(1000);
	CHECK_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
	/* Back at the loop: real time is put off for a while, and status says why. */
	priority_work();
	priority_wait();
	CHECK_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
	st = priority_state();
	CHECK_INT(st.rttime_exceeded, 1);
	CHECK_STR(st.wait, "normal");
	CHECK(st.note && strstr(st.note, "SIGXCPU"));
	CHECK(st.backoff_left_usec > 0 && st.backoff_left_usec <= PRIORITY_BACKOFF_FIRST_USEC);
	/* The soft limit the kernel raised as it signalled is ours again. */
	{
		struct rlimit rl;
		CHECK_INT(getrlimit(RLIMIT_RTTIME, &rl), 0);
		CHECK(rl.rlim_cur <= PRIORITY_RTTIME_SOFT_USEC);
	}
	/* Once the back-off is over, it waits at real time again. */
	spin_usec(PRIORITY_BACKOFF_FIRST_USEC + 10000);
	priority_wait();
	CHECK_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_FIFO);
	priority_work();
	CHECK_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
}

TEST_MAIN(T(the_limit_reached_backs_off_instead_of_killing))
