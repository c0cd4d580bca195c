/* What the exec programs (daemon/events/bpf/execs.bpf.c) and daemon/events/execs.c share:
 * the maps' keys and values, and the record of an exec. */
#pragma once

#include <linux/types.h>

#define EXECS_COMM_LEN 16          /* TASK_COMM_LEN */
#define EXECS_NAMES_MAX 4096       /* comms the rules name */

/* A name's value: when its exec is reported. */
#define EXECS_AT_RENAME 1          /* as the exec names the task: nothing read later is needed */
#define EXECS_AT_END    2          /* when the exec is done: a rule for it needs the command line */

/* The records' kinds. */
#define EXECS_REC_RENAME 1
#define EXECS_REC_END    2
#define EXECS_REC_ENTER  3         /* as the exec begins: the comm its path will give */

struct execs_name {
	char comm[EXECS_COMM_LEN]; /* NUL-padded */
};

struct execs_settings {
	__u32 every;               /* report every exec at its end: some rule may name any comm */
};

#define EXECS_MASK_WORDS 16        /* cpu_set_t's 1,024 CPUs */

struct execs_record {
	__u64 at_ns;               /* CLOCK_MONOTONIC */
	__u64 start_ns;            /* the task's start, after boot (start_boottime) */
	__u64 pid_ino;             /* its pid's inode in pidfs, as a pidfd's fstat() shows it; 0: none (before Linux 6.9) */
	__u64 exec_ns;             /* the exec's own: when its first record was made (its slot's) */
	__u32 tgid;
	__u32 kind;                /* EXECS_REC_* */
	__u32 ppid;                /* its parent's tgid */
	__u32 pad;
	char comm[EXECS_COMM_LEN];
	__u64 mask[EXECS_MASK_WORDS];   /* its affinity (cpus_mask), offline CPUs included */
};

/* The execs reported as they begin or at their rename: a slot each, by
 * tgid (masked with EXECS_RUNNING_SLOTS - 1), written at the first report
 * and marked at the exec's end, which ccxd maps and reads in its own
 * memory. Two execs at once whose tgids share a slot: the later holds it,
 * and the earlier is not found there. */
#define EXECS_RUNNING_SLOTS 4096

/* A slot's state, in the low bits of its word, */
#define EXECS_RUN_UNDER_WAY 1      /* reported, not done: the new program has not run */
#define EXECS_RUN_ENDED     2      /* done */
#define EXECS_RUN_HELD      3      /* done, the task holding the pin ccxd expected (struct execs_pin) */
#define EXECS_RUN_STATE     3ULL   /* the state's bits */
/* and a flag: its rename brought no record, ccxd having pinned it as it
 * began (it decides it there). */
#define EXECS_RUN_LEFT_OUT  4ULL
#define EXECS_RUN_INO_SHIFT 3      /* the pid's inode above them */

struct execs_running {
	__u32 tgid;                /* 0: empty */
	__u32 pad;
	__u64 start_ns;            /* start_boottime */
	__u64 exec_ns;             /* which exec of the task: when it was first reported */
	__u64 word;                /* the pid's inode (0 before Linux 6.9) << EXECS_RUN_INO_SHIFT | EXECS_RUN_*:
				    * what ccxd reads, whole */
};

/* The pin ccxd set on an exec's task, written by ccxd after the pin: the
 * exec's end looks for it on the task, and an exec pinned as it began,
 * which ccxd decides there, has no record at its rename. */
struct execs_pin {
	__u64 pid_ino;             /* the task's pid's inode; 0: none */
	__u64 exec_ns;             /* the exec's, as its record said */
	__u64 mask[EXECS_MASK_WORDS];
};
