/* Exec events from BPF programs that filter them in the kernel
 * (daemon/events/bpf/execs.bpf.c): only the execs that can concern ccxd reach it,
 * those of a program a rule names or of a process in its table, and those
 * of a program whose rules need nothing more than its name come as the exec
 * names the task, before the proc connector's event. Where the kernel
 * refuses the programs, the proc connector's exec events stand in. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "rules.h"

/* One exec: tgid now runs the program called comm; at_ns (CLOCK_MONOTONIC)
 * is when the kernel reported it, and the task then had the affinity mask
 * (offline CPUs included), started at start_time (clock ticks after boot,
 * as /proc/PID/stat says), had the parent ppid, and its pid the inode
 * pid_ino in pidfs (0: unknown); exec_ns tells this exec of the task from
 * its others (execs_expect()). */
struct execs_exec {
	pid_t tgid;
	pid_t ppid;
	const char *comm;
	uint64_t at_ns;
	uint64_t start_time;
	uint64_t pid_ino;
	uint64_t exec_ns;
	cpu_set_t mask;
	bool entering;             /* the exec has begun: /proc shows the old program yet */
};
typedef void (*execs_handler)(void *userdata, const struct execs_exec *e);

struct execs_stats {
	uint64_t at_enter;         /* execs reported as they began */
	uint64_t at_rename;        /* execs reported as they named the task */
	uint64_t at_end;           /* execs reported when done */
	uint64_t full;             /* names the kernel's map could not hold, or every exec not asked for */
	uint64_t dropped;          /* records the kernel dropped, the ring being full */
	uint64_t share_spent;      /* windows in which the records took all their share of CPU */
	uint64_t pinned_first;     /* execs found pinned before their program ran (execs_pinned_first()) */
};

/* The records' share of ccxd's CPU: at most EXECS_SHARE_USEC in each
 * EXECS_WINDOW_USEC (10 % of one CPU), the pins and decisions they bring
 * included, however fast other users exec the programs that the rules name
 * (budget.h). What comes past it waits in the kernel's ring for the next
 * window; what the ring cannot hold is counted, and found by a rescan. */
#define EXECS_WINDOW_USEC 100000
#define EXECS_SHARE_USEC 10000
#define EXECS_RESUME_ACCURACY_USEC 1000

struct execs;

/* Loads and attaches the programs, reporting nothing until
 * execs_set_rules(). Returns 0 and sets *ret; or -errno when the kernel
 * refuses them (no BPF, no BTF, not the initial PID namespace), with why
 * for people. */
int execs_new(sd_event *e, execs_handler handler, void *userdata, struct execs **ret, char *why, size_t why_size);
void execs_free(struct execs *x);

/* The comms to report, from the rules (rules_exec_names()); replaces what
 * was set. When the maps cannot hold them, every exec is reported. */
void execs_set_rules(struct execs *x, const struct rule *rules, size_t n_rules);

/* A process that entered (tracked) or left ccxd's table: its execs are
 * reported whatever program it becomes. */
void execs_track(struct execs *x, pid_t tgid, bool tracked);

/* The pin just set on the main thread of the process whose pid has the
 * inode pid_ino in pidfs, to cpus, at its exec exec_ns (as its record
 * said): the exec's end notes whether its task holds it
 * (execs_pinned_first()), and an exec pinned so as it began (its record
 * entering) brings no record at its rename: the caller decides it at
 * once. One at a time: it replaces the last. */
void execs_expect(struct execs *x, uint64_t pid_ino, uint64_t exec_ns, const cpu_set_t *cpus);

/* Whether the new program of tgid, whose exec was reported by a record
 * that gave pid_ino, has run only with the pin the caller set
 * before asking: its exec is still under way, or it ended holding the pin
 * told to execs_expect(). Then every thread the program makes inherits the
 * pin. false when that cannot be told (the exec ended before the pin,
 * another exec took its slot, or the kernel has no pid inodes). */
bool execs_pinned_first(struct execs *x, pid_t tgid, uint64_t pid_ino);

/* Whether that exec's rename brought no record, its pin as it began having
 * been told to execs_expect() in time: the caller decides it on the
 * record of its start. */
bool execs_left_out(const struct execs *x, pid_t tgid, uint64_t pid_ino);

/* How many records the kernel dropped since the last call, ccxd having
 * fallen behind (the processes they told of are found by a rescan). */
uint64_t execs_dropped(struct execs *x);

/* Reads what the ring holds, within the records' share of CPU: a record
 * whose wake-up came late, or not at all, waits at most an interval. */
void execs_catch_up(struct execs *x);

/* Reads at most max records (max > 0) of what the ring holds, within the
 * share, charging it the CPU taken since cpu_usec, the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) when the work began: read before a sleep, it
 * is off the path from the wake-up to the pin, and costs the same, since
 * a sleeping thread's CPU time stands still. Returns true when more may be
 * waiting. */
bool execs_read_some(struct execs *x, unsigned max, uint64_t cpu_usec);

/* CPU a record's work took outside the reads (the decision after a pin
 * made at real-time priority), charged to the records' share. */
void execs_charge(struct execs *x, uint64_t cpu_usec);

struct execs_stats execs_stats(const struct execs *x);
