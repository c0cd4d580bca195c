/* The table of placements against real processes of the test's own:
 * claims and originals, pins given back, children that inherit, the
 * ledger across a restart, and exits. Needs two CPUs. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "placements.h"
#include "procfs.h"
#include "test.h"

static cpu_set_t cpus(const char *list) {
	cpu_set_t set;

	CHECK_INT(cpulist_parse(list, &set), 0);
	return set;
}

static const char *mask_of(pid_t pid) {
	static char buf[CPULIST_MAX];
	cpu_set_t set;

	if (actuator_get(pid, &set) < 0)
		return "gone";
	return cpulist_format(&set, buf, sizeof(buf));
}

static void need_two_cpus(void) {
	cpu_set_t all;

	if (actuator_get(0, &all) < 0 || !CPU_ISSET(0, &all) || !CPU_ISSET(1, &all))
		SKIP_TEST("needs CPUs 0 and 1");
}

/* A child that sleeps until killed; on SIGUSR1 it forks a child of its own
 * that does the same, and writes its pid to fd. */
static int report_fd = -1;

static void fork_one(int sig) {
	pid_t parent = getpid(), pid;

	(void)sig;
	pid = fork();
	if (pid == 0) {
		/* A parent killed before prctl() sends no signal: gone already. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	if (write(report_fd, &pid, sizeof(pid)) < 0)
		_exit(1);
}

static pid_t spawn(int *reports) {
	pid_t parent = getpid(), pid;
	int fds[2];

	CHECK_INT(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		close(fds[0]);
		report_fd = fds[1];
		signal(SIGUSR1, fork_one);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (reports)
		*reports = fds[0];
	else
		close(fds[0]);
	return pid;
}

/* The child that pid forks on request. */
static pid_t fork_of(pid_t pid, int reports) {
	pid_t child = 0;

	usleep(20000);   /* for its handler to be in place */
	kill(pid, SIGUSR1);
	CHECK(read(reports, &child, sizeof(child)) == sizeof(child));
	return child;
}

static void reap(pid_t pid) {
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static const struct placement *track(struct placements *pl, pid_t pid) {
	struct procfs_stat st;

	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	return placements_track(pl, &st);
}

static const cpu_set_t *all(void) {
	static cpu_set_t set;

	set = cpus("0-1");
	return &set;
}

static void a_pin_is_given_back_its_original(void) {
	struct placements *pl;
	pid_t pid;
	const struct placement *p;
	cpu_set_t one = cpus("1");

	need_two_cpus();
	pid = spawn(NULL);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	p = track(pl, pid);
	CHECK(p != NULL);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_RULE, "x", all(), false, NULL), 0);
	CHECK_STR(p->rule, "x");
	CHECK_INT(placements_pin(pl, p, &one), 0);
	CHECK_INT(p->state, PLACEMENT_PINNED);
	CHECK_STR(mask_of(pid), "1");
	CHECK_INT(placements_give_back(pl, p), 0);
	CHECK_STR(mask_of(pid), "0-1");
	CHECK_INT(placements_stats(pl).pins, 1);
	CHECK_INT(placements_stats(pl).restores, 1);
	placements_free(pl);
	reap(pid);
}

static void a_hand_set_mask_is_not_claimed_unless_forced(void) {
	struct placements *pl;
	pid_t pid;
	const struct placement *p;
	cpu_set_t zero = cpus("0");

	need_two_cpus();
	pid = spawn(NULL);
	CHECK_INT(sched_setaffinity(pid, sizeof(zero), &zero), 0);   /* taskset -p 0 */
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	p = track(pl, pid);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_AUTO, NULL, all(), false, NULL), -EPERM);
	CHECK(!p->have_original);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_HAND, NULL, all(), true, NULL), 0);
	CHECK_STR(cpulist_format(&p->original, (char[CPULIST_MAX]){ 0 }, CPULIST_MAX), "0");
	placements_free(pl);
	reap(pid);
}

static void a_rule_taking_over_keeps_the_original_the_policy_kept(void) {
	struct placements *pl;
	pid_t pid;
	const struct placement *p;
	cpu_set_t one = cpus("1"), zero = cpus("0");

	need_two_cpus();
	pid = spawn(NULL);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	p = track(pl, pid);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_AUTO, NULL, all(), false, NULL), 0);
	CHECK_INT(placements_pin(pl, p, &one), 0);
	/* Seated on CPU 1 by the policy: a rule takes it with its true original. */
	CHECK(track(pl, pid) == p);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_RULE, "x", all(), false, NULL), 0);
	CHECK_INT(p->owner, PLACEMENT_RULE);
	CHECK_INT(placements_pin(pl, p, &zero), 0);
	CHECK_INT(placements_give_back(pl, p), 0);
	CHECK_STR(mask_of(pid), "0-1");
	placements_free(pl);
	reap(pid);
}

static void a_child_of_a_pinned_process_is_adopted(void) {
	struct placements *pl;
	struct procfs_stat st;
	pid_t pid, child, other;
	int reports;
	const struct placement *p, *c;
	cpu_set_t one = cpus("1"), zero = cpus("0");

	need_two_cpus();
	pid = spawn(&reports);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	p = track(pl, pid);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_RULE, "x", all(), false, NULL), 0);
	CHECK_INT(placements_pin(pl, p, &one), 0);
	child = fork_of(pid, reports);
	CHECK_STR(mask_of(child), "1");   /* inherited */
	placements_adopt_children(pl);
	c = placements_get(pl, child);
	CHECK(c != NULL);
	if (c) {
		CHECK_INT(c->state, PLACEMENT_PINNED);
		CHECK_STR(c->rule, "x");
		CHECK_INT(c->inherited_from, pid);
		CHECK_STR(cpulist_format(&c->original, (char[CPULIST_MAX]){ 0 }, CPULIST_MAX), "0-1");
	}
	/* A child with a mask of somebody else's choosing is not ccxd's. */
	other = fork_of(pid, reports);
	CHECK_INT(sched_setaffinity(other, sizeof(zero), &zero), 0);
	CHECK_INT(procfs_read_stat("", other, &st), 0);
	CHECK(!placements_adopt_if_inherited(pl, &st));
	CHECK(placements_get(pl, other) == NULL);
	placements_free(pl);
	reap(pid);
	close(reports);
}

static bool in_no_group(void *userdata, pid_t pid) {
	(void)userdata;
	(void)pid;
	return false;
}

static void a_seat_inherited_from_a_member_goes_back(void) {
	struct placements *pl;
	pid_t pid, child;
	int reports;
	const struct placement *p;
	cpu_set_t one = cpus("1");

	need_two_cpus();
	pid = spawn(&reports);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	p = track(pl, pid);
	CHECK_INT(placements_claim(pl, p, PLACEMENT_AUTO, NULL, all(), false, NULL), 0);
	CHECK_INT(placements_pin(pl, p, &one), 0);
	child = fork_of(pid, reports);
	CHECK_STR(mask_of(child), "1");
	placements_return_inherited(pl, in_no_group, NULL);
	CHECK_STR(mask_of(child), "0-1");
	CHECK_STR(mask_of(pid), "1");   /* the member keeps its seat */
	CHECK(placements_get(pl, child) == NULL);
	placements_free(pl);
	reap(pid);
	close(reports);
}

struct restart {
	pid_t decided;
	const char *why;
};

static const char *keep(void *userdata, const struct ledger_entry *e) {
	struct restart *r = userdata;

	return e->owner == LEDGER_AUTO ? r->why : NULL;
}

static void decide(void *userdata, pid_t pid) {
	((struct restart *)userdata)->decided = pid;
}

static void the_ledger_is_taken_back_after_a_restart(void) {
	static const struct placements_readopt_ops ops = { keep, decide };
	char dir[] = "/tmp/ccxd-test-ledger-XXXXXX";
	struct placements *before, *after;
	struct restart r = { .why = "automatic placements are measured again" };
	pid_t ruled, member;
	const struct placement *p;
	cpu_set_t one = cpus("1");

	need_two_cpus();
	CHECK(mkdtemp(dir) != NULL);
	ruled = spawn(NULL);
	member = spawn(NULL);
	CHECK_INT(placements_new(NULL, "", dir, &before), 0);
	p = track(before, ruled);
	CHECK_INT(placements_claim(before, p, PLACEMENT_RULE, "x", all(), false, NULL), 0);
	CHECK_INT(placements_pin(before, p, &one), 0);
	p = track(before, member);
	CHECK_INT(placements_claim(before, p, PLACEMENT_AUTO, NULL, all(), false, NULL), 0);
	CHECK_INT(placements_pin(before, p, &one), 0);
	CHECK_INT(placements_sync_ledger(before), 0);
	/* Killed: the table goes, the affinities and the ledger stay. */
	placements_free(before);
	CHECK_STR(mask_of(ruled), "1");

	CHECK_INT(placements_new(NULL, "", dir, &after), 0);
	CHECK_INT(placements_readopt(after, &ops, &r), 0);
	p = placements_get(after, ruled);
	CHECK(p && p->state == PLACEMENT_PINNED && p->rule && strcmp(p->rule, "x") == 0);
	CHECK_INT(r.decided, ruled);
	CHECK_INT(placements_stats(after).readopted, 1);
	/* The automatic policy's member is given its original back. */
	CHECK_STR(mask_of(member), "0-1");
	CHECK(placements_get(after, member) == NULL);
	if (p)
		CHECK_INT(placements_give_back(after, p), 0);
	char file[sizeof(dir) + sizeof(LEDGER_FILE) + 1];
	snprintf(file, sizeof(file), "%s/%s", dir, LEDGER_FILE);
	CHECK(access(file, F_OK) == 0);
	CHECK_INT(placements_sync_ledger(after), 0);   /* nothing owed: the file goes */
	CHECK(access(file, F_OK) < 0);
	placements_free(after);
	CHECK_STR(mask_of(ruled), "0-1");
	reap(ruled);
	reap(member);
	rmdir(dir);
}

/* Exits are taken when asked for, all at once: the live entry stays. */
static void a_reap_takes_the_exited_away(void) {
	struct placements *pl;
	pid_t pid, alive;

	pid = spawn(NULL);
	alive = spawn(NULL);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	CHECK(track(pl, pid) != NULL);
	CHECK(track(pl, alive) != NULL);
	CHECK_INT(placements_reap(pl), 0);
	if (pid > 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(placements_get(pl, pid) != NULL);   /* until reaped */
	CHECK_INT(placements_reap(pl), 1);
	CHECK(placements_get(pl, pid) == NULL);
	CHECK(placements_get(pl, alive) != NULL);
	CHECK_INT(placements_count(pl), 1);
	placements_free(pl);
	if (alive > 1)
		kill(alive, SIGKILL);
	waitpid(alive, NULL, 0);
}

static void a_reused_pid_is_another_process(void) {
	struct placements *pl;
	struct procfs_stat st;
	pid_t pid;
	const struct placement *p;

	pid = spawn(NULL);
	CHECK_INT(placements_new(NULL, "", NULL, &pl), 0);
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	p = placements_track(pl, &st);
	CHECK(p != NULL);
	st.start_time++;   /* the same pid, started later: not the one tracked */
	CHECK(placements_track(pl, &st) == NULL);
	CHECK_INT(errno, ESRCH);
	CHECK(placements_get(pl, pid) == NULL);
	placements_free(pl);
	reap(pid);
}

TEST_MAIN(T(a_pin_is_given_back_its_original), T(a_hand_set_mask_is_not_claimed_unless_forced),
	  T(a_rule_taking_over_keeps_the_original_the_policy_kept), T(a_child_of_a_pinned_process_is_adopted),
	  T(a_seat_inherited_from_a_member_goes_back), T(the_ledger_is_taken_back_after_a_restart),
	  T(a_reap_takes_the_exited_away), T(a_reused_pid_is_another_process))
