/* What the rules say for one process, decided from what was read of it:
 * pure functions, so that every case can be tested with struct literals.
 * The ruler (ruler.h) reads the process and carries the ruling out. */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "rules.h"
#include "topology.h"

enum ruling_trigger {
	RULING_EXEC,              /* it just became a new program */
	RULING_COMM,              /* it renamed itself */
	RULING_SCAN,              /* found by a /proc scan */
	RULING_RELOAD,            /* the rules changed */
	RULING_EXPLAIN,           /* a person asks why (ccxctl explain): nothing is decided */
};

enum ruling_look {
	RULING_NOTHING,           /* nothing to decide: known and unchanged, or released */
	RULING_DECIDE,            /* match the rules, and decide */
	RULING_FORGET_DECIDE,     /* released, and executed a new program: forget it, then decide */
};

/* Whether the trigger is a reason to decide about a process, now named
 * comm, that a rule or a hand placed when it was named known_comm (NULL:
 * one they do not know), and that a hand may have released since: a scan
 * passes over a known process that is still the same program, and one
 * released by hand is left alone until it executes a new program. */
enum ruling_look ruling_look(const char *known_comm, bool released, const char *comm, enum ruling_trigger trigger);

/* What was read of a process that a rule matched. */
struct ruling_subject {
	bool ours;                /* a rule's or a hand's placement ccxd made, or would in dry-run */
	cpu_set_t mask;           /* not ours: the original it would be taken with
				   * (placements_original_of()) */
	cpu_set_t allowed;        /* its cgroup cpuset, within the online CPUs */
};

struct ruling_context {
	const struct topology *topology;
	bool dry_run;             /* decide and report, set nothing */
	const unsigned *load;     /* per CCX: the processes rules placed there, but this one */
	bool bounded;             /* this machine's cpusets bound the choice: false for another
				   * machine's topology in dry-run, whose decisions are that machine's */
};

enum ruling_action {
	RULING_IGNORE,            /* policy = ignore: what ccxd set goes back; noted as ignored */
	RULING_HAND_OVER,         /* policy = pair or auto: the automatic policy's; what ccxd set
				   * goes back, and the rules forget it */
	RULING_LEAVE_ALONE,       /* what ccxd set goes back; noted as skipped */
	RULING_PIN,               /* to cpus (spread: threads take sets in turn); taken with its
				   * original first unless ours */
	RULING_WOULD_PIN,         /* dry-run: noted, not set */
};

struct ruling {
	enum ruling_action action;
	cpu_set_t cpus;
	cpu_set_t *sets;          /* policy = spread: malloc'd, n_sets of them; the caller's */
	size_t n_sets;
	char reason[160];         /* for status; RULING_PIN: what it says once pinned */
};

/* rule's ruling for s. Returns 0, or -ENOMEM. */
int ruling_decide(const struct rule *rule, const struct ruling_subject *s, const struct ruling_context *ctx,
		  struct ruling *ret);
