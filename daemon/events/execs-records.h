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
	__u32 tgid;
	__u32 kind;                /* EXECS_REC_* */
	char comm[EXECS_COMM_LEN];
	__u64 mask[EXECS_MASK_WORDS];   /* its affinity (cpus_mask), offline CPUs included */
};
