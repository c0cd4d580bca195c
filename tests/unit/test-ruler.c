/* The rules at work on real processes of the test's own, on two one-CPU
 * CCXs: a rule pins, takes over a seat of the automatic policy with the
 * true original, leaves a hand-set mask alone, and gives a seat back when
 * it says to leave the process alone; an exec is pinned before its full
 * decision, which completes the pin or takes it back. Needs CPUs 0 and 1. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "ruler.h"
#include "test.h"
#include "topologies.h"

#define NAME "ccxt-ruled"

static const char *mask_of(pid_t pid) {
	static char buf[CPULIST_MAX];
	cpu_set_t set;

	if (actuator_get(pid, &set) < 0)
		return "gone";
	return cpulist_format(&set, buf, sizeof(buf));
}

static void *sleeper(void *arg) {
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int renamed = -1;   /* the child's end: written once it took another name */

static void rename_self(int sig) {
	(void)sig;
	prctl(PR_SET_NAME, "ccxt-other");
	if (write(renamed, "", 1) < 0)
		_exit(1);
}

/* A child named NAME with threads threads in all, that sleeps until killed;
 * on SIGUSR1 it takes another name and writes a byte to *renamed_fd. */
static pid_t spawn_with(int threads, int *renamed_fd) {
	int ready[2], done[2];
	pid_t pid;
	char c;

	CHECK_INT(pipe(ready), 0);
	CHECK_INT(pipe(done), 0);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		prctl(PR_SET_NAME, NAME);
		renamed = done[1];
		signal(SIGUSR1, rename_self);
		for (int i = 1; i < threads; i++) {
			pthread_t t;
			if (pthread_create(&t, NULL, sleeper, NULL) != 0)
				_exit(1);
		}
		close(ready[0]);
		if (write(ready[1], "", 1) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(done[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	if (renamed_fd)
		*renamed_fd = done[0];
	else
		close(done[0]);
	return pid;
}

/* A child named NAME that sleeps until killed. */
static pid_t spawn(void) {
	return spawn_with(1, NULL);
}

/* Whether every thread of pid has the affinity list. */
static bool every_thread_on(pid_t pid, const char *list) {
	char path[64], buf[CPULIST_MAX];
	struct dirent *de;
	bool all = true;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		cpu_set_t set;
		if (de->d_name[0] == '.')
			continue;
		n++;
		if (sched_getaffinity(atoi(de->d_name), sizeof(set), &set) < 0 ||
		    strcmp(cpulist_format(&set, buf, sizeof(buf)), list) != 0)
			all = false;
	}
	closedir(d);
	return all && n > 0;
}

static void reap(pid_t pid) {
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

struct world {
	struct placements *pl;
	struct ruler *ruler;
	struct topology *t;
	struct config *c;
	struct rule rule;
};

/* A ruler with one rule for NAME, on two one-CPU CCXs, in enforce mode. */
static void world_new(struct world *w, enum rule_policy policy) {
	static unsigned one[] = { 1 };
	cpu_set_t online;

	CHECK_INT(cpulist_parse("0-1", &online), 0);
	w->t = test_topology("synthetic:pack:1 l3:2 core:1 pu:1");
	w->c = config_new_default();
	w->rule = (struct rule){ .name = NAME, .policy = policy, .ccx = one, .n_ccx = 1 };
	w->c->rules = &w->rule;
	w->c->n_rules = 1;
	CHECK_INT(placements_new(NULL, "", NULL, &w->pl), 0);
	CHECK_INT(ruler_new("", w->pl, &online, &w->ruler), 0);
	ruler_use(w->ruler, w->c, w->t);
}

static void world_free(struct world *w) {
	ruler_free(w->ruler);
	placements_free(w->pl);
	w->c->rules = NULL;
	w->c->n_rules = 0;
	config_free(w->c);
	topology_free(w->t);
}

static void need_two_cpus(void) {
	cpu_set_t all;

	if (actuator_get(0, &all) < 0 || !CPU_ISSET(0, &all) || !CPU_ISSET(1, &all))
		SKIP_TEST("needs CPUs 0 and 1");
}

/* pid seated on CPU 0 by the automatic policy. */
static void seat(struct world *w, pid_t pid) {
	struct procfs_stat st;
	const struct placement *p;
	cpu_set_t zero, all;

	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	CHECK_INT(cpulist_parse("0", &zero), 0);
	CHECK_INT(cpulist_parse("0-1", &all), 0);
	p = placements_track(w->pl, &st);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INT(placements_claim(w->pl, p, PLACEMENT_AUTO, NULL, &all, false, NULL), 0);
	CHECK_INT(placements_pin(w->pl, p, &zero), 0);
	CHECK_STR(mask_of(pid), "0");
}

static void a_rule_pins_and_gives_back(void) {
	struct world w;
	pid_t pid;
	const struct placement *p;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_STR(mask_of(pid), "1");
	p = placements_get(w.pl, pid);
	CHECK(p && p->state == PLACEMENT_PINNED && p->owner == PLACEMENT_RULE);
	CHECK_INT(ruler_pinned(w.ruler), 1);
	ruler_restore_all(w.ruler, false);
	CHECK_STR(mask_of(pid), "0-1");
	CHECK(placements_get(w.pl, pid) == NULL);
	world_free(&w);
	reap(pid);
}

static void a_rule_takes_a_seat_with_the_true_original(void) {
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	seat(&w, pid);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_RELOAD), 0);
	CHECK_STR(mask_of(pid), "1");
	ruler_restore_all(w.ruler, false);
	CHECK_STR(mask_of(pid), "0-1");   /* not the seat it had when the rule took it */
	world_free(&w);
	reap(pid);
}

static void a_rule_that_leaves_it_alone_gives_a_seat_back(void) {
	struct world w;
	pid_t pid;
	const struct placement *p;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_IGNORE);
	seat(&w, pid);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_RELOAD), 0);
	CHECK_STR(mask_of(pid), "0-1");
	p = placements_get(w.pl, pid);
	CHECK(p && p->state == PLACEMENT_IGNORED && p->owner == PLACEMENT_RULE);
	world_free(&w);
	reap(pid);
}

static void a_hand_set_mask_is_left_alone(void) {
	struct world w;
	pid_t pid;
	const struct placement *p;
	cpu_set_t zero;

	need_two_cpus();
	pid = spawn();
	CHECK_INT(cpulist_parse("0", &zero), 0);
	CHECK_INT(sched_setaffinity(pid, sizeof(zero), &zero), 0);
	world_new(&w, RULE_POLICY_PIN);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_STR(mask_of(pid), "0");
	p = placements_get(w.pl, pid);
	CHECK(p && p->state == PLACEMENT_SKIPPED);
	if (p)
		CHECK_STR(p->reason, "rule " NAME ": affinity 0 was set by someone else (force = no)");
	world_free(&w);
	reap(pid);
}

static void released_by_hand_until_it_executes(void) {
	struct world w;
	pid_t pid;
	const struct placement *p;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_INT(ruler_unpin(w.ruler, pid, &p), 0);
	CHECK_STR(mask_of(pid), "0-1");
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_RELOAD), 0);
	CHECK_STR(mask_of(pid), "0-1");
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_STR(mask_of(pid), "1");
	world_free(&w);
	reap(pid);
}

/* What an exec record tells of pid: its affinity and start, as read now. */
static struct placement_seen seen_of(pid_t pid) {
	struct placement_seen seen = { .pid_ino = 0 };
	struct procfs_stat st;

	CHECK_INT(actuator_get(pid, &seen.mask), 0);
	CHECK_INT(procfs_read_stat("", pid, &st), 0);
	seen.start_time = st.start_time;
	return seen;
}

/* An exec pinned by ruler_exec() and kept by its decision, with the
 * original it had; told by a record (with_record) or not. */
static void pinned_at_exec_and_kept(bool with_record) {
	struct placement_seen seen;
	const struct placement *p;
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	seen = seen_of(pid);
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, with_record ? &seen : NULL, false, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(pid), "1");
	CHECK(placements_get(w.pl, pid) == NULL);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	p = placements_get(w.pl, pid);
	CHECK(p && p->state == PLACEMENT_PINNED && p->owner == PLACEMENT_RULE && p->have_original);
	if (p)
		CHECK_STR(cpulist_format(&p->original, (char[CPULIST_MAX]){ 0 }, CPULIST_MAX), "0-1");
	ruler_restore_all(w.ruler, false);
	CHECK_STR(mask_of(pid), "0-1");
	world_free(&w);
	reap(pid);
}

/* The main thread is pinned by ruler_exec() itself, before anything else
 * is read (the pidfd and the affinity first); the decision that follows
 * keeps the original it had. */
static void an_exec_is_pinned_before_its_decision(void) {
	pinned_at_exec_and_kept(false);
}

/* Told the affinity and start by the record, the pin comes first and the
 * pidfd after. */
static void an_exec_seen_by_its_record_is_pinned_first(void) {
	pinned_at_exec_and_kept(true);
}

/* Threads made before the early pin get it from the decision. */
static void threads_made_before_the_early_pin_get_it_too(void) {
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn_with(4, NULL);
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, NULL, false, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(pid), "1");
	CHECK(!every_thread_on(pid, "1"));
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK(every_thread_on(pid, "1"));
	world_free(&w);
	reap(pid);
}

/* Another program by the time the decision reads it (as a reused pid would
 * be): the early pin goes back. */
static void an_early_pin_the_rules_do_not_keep_goes_back(void) {
	bool pinned;
	struct world w;
	int renamed_fd = -1;
	pid_t pid;
	char c;

	need_two_cpus();
	pid = spawn_with(1, &renamed_fd);
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, NULL, false, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(pid), "1");
	if (pid > 1)
		CHECK_INT(kill(pid, SIGUSR1), 0);
	CHECK(read(renamed_fd, &c, 1) == 1);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_STR(mask_of(pid), "0-1");
	CHECK(placements_get(w.pl, pid) == NULL);
	close(renamed_fd);
	world_free(&w);
	reap(pid);
}

/* On fewer CPUs than all (taskset, a cpuset), a process waits for the full
 * decision, which leaves a hand-set mask alone. */
static void a_hand_set_mask_is_not_pinned_early(void) {
	bool pinned;
	struct world w;
	cpu_set_t zero;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	CHECK_INT(cpulist_parse("0", &zero), 0);
	CHECK_INT(sched_setaffinity(pid, sizeof(zero), &zero), 0);
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, NULL, false, &pinned));
	CHECK(!pinned);
	CHECK_STR(mask_of(pid), "0");
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK_STR(mask_of(pid), "0");
	world_free(&w);
	reap(pid);
}

/* Decided ahead, an exec is pinned from the table: as the rule stood then,
 * until the rules change (here the rule is changed in place, which only a
 * new configuration does, to tell the table from a decision on the spot). */
static void an_exec_decided_ahead_goes_where_the_table_says(void) {
	static unsigned zero_ccx[] = { 0 };
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	ruler_decide_ahead(w.ruler);
	w.rule.ccx = zero_ccx;
	CHECK(ruler_exec(w.ruler, pid, NAME, NULL, true, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(pid), "1");
	placements_settle_early(w.pl);
	CHECK_STR(mask_of(pid), "0-1");
	/* Not ahead: decided on the spot. */
	CHECK(ruler_exec(w.ruler, pid, NAME, NULL, false, &pinned));
	CHECK_STR(mask_of(pid), "0");
	placements_settle_early(w.pl);
	/* The rules changed: decided ahead again. */
	ruler_use(w.ruler, w.c, w.t);
	ruler_decide_ahead(w.ruler);
	CHECK(ruler_exec(w.ruler, pid, NAME, NULL, true, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(pid), "0");
	placements_settle_early(w.pl);
	world_free(&w);
	reap(pid);
}

/* Pinned as its exec begins (/proc shows the old program yet): told
 * again, it keeps the pin; the exec's own record brings the decision,
 * which keeps it; a pin whose exec never named the task is taken back
 * when the early pin is settled. */
static void an_exec_pinned_as_it_begins_is_decided_at_its_rename(void) {
	struct placement_seen seen;
	const struct placement *p;
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	seen = seen_of(pid);
	world_new(&w, RULE_POLICY_PIN);
	ruler_decide_ahead(w.ruler);
	CHECK(ruler_exec_entering(w.ruler, pid, NAME, &seen));
	CHECK_STR(mask_of(pid), "1");
	CHECK(placements_get(w.pl, pid) == NULL);
	CHECK(!ruler_exec_entering(w.ruler, pid, NAME, &seen));
	CHECK_STR(mask_of(pid), "1");
	/* The rename's record: no pin again (its mask is the pin's), the decision. */
	seen = seen_of(pid);
	CHECK(ruler_exec(w.ruler, pid, NAME, &seen, true, &pinned));
	CHECK(!pinned);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	p = placements_get(w.pl, pid);
	CHECK(p && p->state == PLACEMENT_PINNED && p->have_original);
	if (p)
		CHECK_STR(cpulist_format(&p->original, (char[CPULIST_MAX]){ 0 }, CPULIST_MAX), "0-1");
	ruler_restore_all(w.ruler, false);
	CHECK_STR(mask_of(pid), "0-1");
	/* An exec that fails: nothing followed the entry. */
	seen = seen_of(pid);
	placements_remove(w.pl, pid);
	CHECK(ruler_exec_entering(w.ruler, pid, NAME, &seen));
	CHECK_STR(mask_of(pid), "1");
	placements_settle_early(w.pl);
	CHECK_STR(mask_of(pid), "0-1");
	world_free(&w);
	reap(pid);
}

/* ccx = auto: each exec decided ahead goes to the CCX with the fewest
 * processes the rules placed, counted again before each. */
static void ccx_auto_decided_ahead_follows_the_load(void) {
	bool pinned;
	struct world w;
	pid_t a, b;
	char first[CPULIST_MAX];

	need_two_cpus();
	a = spawn();
	b = spawn();
	world_new(&w, RULE_POLICY_PIN);
	w.rule.ccx = NULL;
	w.rule.n_ccx = 0;
	w.rule.ccx_auto = true;
	ruler_use(w.ruler, w.c, w.t);
	ruler_decide_ahead(w.ruler);
	CHECK(ruler_exec(w.ruler, a, NAME, NULL, true, &pinned));
	CHECK(pinned);
	CHECK_INT(ruler_evaluate(w.ruler, a, RULING_EXEC), 0);
	snprintf(first, sizeof(first), "%s", mask_of(a));
	CHECK(strcmp(first, "0") == 0 || strcmp(first, "1") == 0);
	ruler_decide_ahead(w.ruler);
	CHECK(ruler_exec(w.ruler, b, NAME, NULL, true, &pinned));
	CHECK(pinned);
	CHECK_STR(mask_of(b), strcmp(first, "0") == 0 ? "1" : "0");
	CHECK_INT(ruler_evaluate(w.ruler, b, RULING_EXEC), 0);
	CHECK_STR(mask_of(b), strcmp(first, "0") == 0 ? "1" : "0");
	ruler_restore_all(w.ruler, false);
	world_free(&w);
	reap(a);
	reap(b);
}

/* Nothing is decided ahead outside mode = enforce. */
static void nothing_is_pinned_ahead_in_dry_run(void) {
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	w.c->mode = CONFIG_MODE_DRY_RUN;
	ruler_use(w.ruler, w.c, w.t);
	ruler_decide_ahead(w.ruler);
	CHECK(ruler_exec(w.ruler, pid, NAME, NULL, true, &pinned));
	CHECK(!pinned);
	CHECK_STR(mask_of(pid), "0-1");
	world_free(&w);
	reap(pid);
}

/* A record of another process by that pid (another start time, as a pid
 * reused between the record and the pin would show): the pin goes back
 * and the process is not taken. A record that shows fewer CPUs than all is
 * not pinned early. */
static void a_record_of_another_start_or_mask_is_not_kept(void) {
	struct placement_seen seen;
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	seen = seen_of(pid);
	seen.start_time++;
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, &seen, false, &pinned));
	CHECK(pinned);
	CHECK_INT(ruler_evaluate(w.ruler, pid, RULING_EXEC), 0);
	CHECK(placements_get(w.pl, pid) == NULL);
	CHECK_STR(mask_of(pid), "0-1");
	seen = seen_of(pid);
	CPU_CLR(1, &seen.mask);
	CHECK(ruler_exec(w.ruler, pid, NULL, &seen, false, &pinned));
	CHECK(!pinned);
	CHECK_STR(mask_of(pid), "0-1");
	world_free(&w);
	reap(pid);
}

/* Pinned first, a process whose pidfd cannot be opened after (no
 * descriptor left) is not kept: the pin goes back at once. */
static void a_pin_without_its_pidfd_goes_back(void) {
	struct placement_seen seen;
	struct rlimit old, few;
	int fds[64], n = 0;
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	seen = seen_of(pid);
	world_new(&w, RULE_POLICY_PIN);
	CHECK_INT(getrlimit(RLIMIT_NOFILE, &old), 0);
	few = old;
	fds[0] = open("/dev/null", O_RDONLY);   /* the lowest free descriptor: none left past it */
	CHECK(fds[0] >= 0);
	few.rlim_cur = (rlim_t)fds[0];
	close(fds[0]);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &few), 0);
	while (n < 64 && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
		n++;
	CHECK(ruler_exec(w.ruler, pid, NAME, &seen, false, &pinned));
	while (n > 0)
		close(fds[--n]);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &old), 0);
	CHECK(!pinned);
	CHECK_STR(mask_of(pid), "0-1");
	world_free(&w);
	reap(pid);
}

/* An early pin taken back leaves a mask somebody set since alone. */
static void taking_an_early_pin_back_leaves_another_mask_alone(void) {
	cpu_set_t zero;
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NULL, NULL, false, &pinned));
	CHECK(pinned);
	CHECK_INT(cpulist_parse("0", &zero), 0);
	CHECK_INT(sched_setaffinity(pid, sizeof(zero), &zero), 0);
	placements_settle_early(w.pl);
	CHECK_STR(mask_of(pid), "0");
	world_free(&w);
	reap(pid);
}

/* The inode of pid's pid in pidfs, as an exec's record tells it. */
static uint64_t pid_ino_of(pid_t pid) {
	int fd = pidfd_open(pid, 0);
	struct stat st;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? (uint64_t)st.st_ino : 0;
}

/* The decision after an early pin, told by its exec's record (seen) whose
 * program can have run only with the pin (pinned_first): the record stands
 * for /proc where its pid inode is the pidfd's. Here /proc says the child
 * took another name since, which no rule names: decided from the record,
 * it is kept pinned under NAME; from /proc, the early pin goes back. */
static void decided_from_a_record(bool pinned_first, bool own_inode) {
	struct placement_seen seen;
	const struct placement *p;
	int renamed_fd = -1;
	bool pinned;
	struct world w;
	pid_t pid;
	char c;

	need_two_cpus();
	pid = spawn_with(1, &renamed_fd);
	seen = seen_of(pid);
	seen.pid_ino = own_inode ? pid_ino_of(pid) : pid_ino_of(getpid());
	seen.ppid = getpid();
	snprintf(seen.comm, sizeof(seen.comm), "%s", NAME);
	world_new(&w, RULE_POLICY_PIN);
	CHECK(ruler_exec(w.ruler, pid, NAME, &seen, false, &pinned));
	CHECK(pinned);
	if (pid > 1)
		CHECK_INT(kill(pid, SIGUSR1), 0);
	CHECK(read(renamed_fd, &c, 1) == 1);
	CHECK_INT(ruler_evaluate_exec(w.ruler, pid, &seen, pinned_first), 0);
	p = placements_get(w.pl, pid);
	if (pinned_first && own_inode) {
		CHECK(p && p->state == PLACEMENT_PINNED && p->have_original);
		if (p)
			CHECK_STR(p->comm, NAME);
		CHECK_STR(mask_of(pid), "1");
		ruler_restore_all(w.ruler, false);
	} else
		CHECK(p == NULL);
	CHECK_STR(mask_of(pid), "0-1");
	close(renamed_fd);
	world_free(&w);
	reap(pid);
}

static void an_exec_pinned_first_is_decided_from_its_record(void) {
	decided_from_a_record(true, true);
}

/* Its program may have run before the pin: /proc, which shows the threads
 * it made, decides. */
static void an_exec_that_ran_before_its_pin_is_decided_from_proc(void) {
	decided_from_a_record(false, true);
}

/* A pidfd of another process than the record's (a pid reused between the
 * pin and the pidfd): /proc decides. */
static void a_record_of_another_pid_inode_is_not_taken(void) {
	decided_from_a_record(true, false);
}

/* A program no rule names costs its comm and nothing else. */
static void a_stranger_is_not_looked_at_further(void) {
	bool pinned;
	struct world w;
	pid_t pid;

	need_two_cpus();
	pid = spawn();
	world_new(&w, RULE_POLICY_PIN);
	w.rule.name = "ccxt-nobody";
	CHECK(!ruler_exec(w.ruler, pid, NULL, NULL, false, &pinned));
	CHECK(!pinned);
	CHECK_STR(mask_of(pid), "0-1");
	w.rule.name = NAME;
	world_free(&w);
	reap(pid);
}

TEST_MAIN(T(a_rule_pins_and_gives_back), T(a_rule_takes_a_seat_with_the_true_original),
	  T(a_rule_that_leaves_it_alone_gives_a_seat_back), T(a_hand_set_mask_is_left_alone),
	  T(released_by_hand_until_it_executes), T(an_exec_is_pinned_before_its_decision),
	  T(threads_made_before_the_early_pin_get_it_too), T(an_early_pin_the_rules_do_not_keep_goes_back),
	  T(a_hand_set_mask_is_not_pinned_early), T(an_exec_decided_ahead_goes_where_the_table_says),
	  T(ccx_auto_decided_ahead_follows_the_load), T(nothing_is_pinned_ahead_in_dry_run),
	  T(an_exec_seen_by_its_record_is_pinned_first), T(a_record_of_another_start_or_mask_is_not_kept),
	  T(a_pin_without_its_pidfd_goes_back), T(taking_an_early_pin_back_leaves_another_mask_alone),
	  T(a_stranger_is_not_looked_at_further), T(an_exec_pinned_as_it_begins_is_decided_at_its_rename),
	  T(an_exec_pinned_first_is_decided_from_its_record), T(an_exec_that_ran_before_its_pin_is_decided_from_proc),
	  T(a_record_of_another_pid_inode_is_not_taken))
