/* The processes ccxd has decided something about, keyed by pid and checked
 * against their start time: a pid alone names a process only until it is
 * reused. Processes no rule matched are not kept. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "procfs.h"

enum proc_state {
	PROC_PINNED,              /* ccxd set its affinity */
	PROC_DRY_RUN,             /* ccxd would set it (mode = dry-run) */
	PROC_SKIPPED,             /* a rule matched but ccxd left it alone: see reason */
	PROC_IGNORED,             /* its rule says policy = ignore */
	PROC_RELEASED,            /* unpinned by hand; left alone until it execs again */
};

struct proc {
	pid_t pid;
	uint64_t start_time;      /* clock ticks after boot, from /proc/PID/stat */
	int pidfd;                /* names this very process; -1 until opened */
	sd_event_source *exit_watch; /* fires when the process exits (pidfd readable) */
	void *owner;              /* for exit_watch's handler */
	char comm[PROCFS_COMM_MAX];
	char *rule;               /* name of the rule that placed it, NULL when pinned by hand */
	enum proc_state state;
	bool have_original;
	cpu_set_t original;       /* affinity before ccxd first touched it */
	cpu_set_t cpus;           /* affinity ccxd gave it (or would give it) */
	pid_t inherited_from;     /* parent it inherited its placement from, 0 if none */
	cpu_set_t *spread;        /* policy = spread: the CPU sets its threads take in turn */
	size_t n_spread;
	unsigned spread_next;     /* which set the next thread takes */
	pid_t *spread_placed;     /* the threads given a set, by tid: not all below the highest
				   * one, as tids start again from low after kernel.pid_max */
	size_t n_spread_placed;
	char reason[160];
};

struct proctable;

struct proctable *proctable_new(void);
void proctable_free(struct proctable *t);

size_t proctable_size(const struct proctable *t);
struct proc *proctable_get(const struct proctable *t, pid_t pid);

/* Adds a fresh entry (state PROC_SKIPPED, no original), replacing any stale
 * entry for the same pid. Returns NULL when out of memory. */
struct proc *proctable_add(struct proctable *t, pid_t pid, uint64_t start_time);

void proctable_remove(struct proctable *t, pid_t pid);

/* Every entry, sorted by pid, as a malloc'd array of pointers that stays valid
 * until the table is next changed. */
struct proc **proctable_list(const struct proctable *t, size_t *n);

int proc_set_rule(struct proc *p, const char *rule);
/* Takes ownership of sets (NULL, 0: not spread). */
void proc_set_spread(struct proc *p, cpu_set_t *sets, size_t n);
/* Whether thread tid of a spread process was given a set. */
bool proc_spread_placed(const struct proc *p, pid_t tid);
/* Notes that tid was given a set. */
int proc_spread_note(struct proc *p, pid_t tid);
/* Takes ownership of tids (n, in any order): the threads given a set, and
 * no other. */
void proc_spread_set_placed(struct proc *p, pid_t *tids, size_t n);
const char *proc_state_to_string(enum proc_state s);
