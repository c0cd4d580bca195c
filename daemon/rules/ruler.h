/* The rules at work: reads what a ruling needs of a process (/proc, its
 * affinity), asks ruling.h what the rules say, and carries it out on the
 * table of placements; and does what a hand asks (ccxctl pin, unpin). */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cmdlines.h"
#include "config.h"
#include "ledger.h"
#include "placements.h"
#include "ruling.h"
#include "topology.h"

struct ruler;

int ruler_new(const char *root, struct placements *pl, const cpu_set_t *online, struct ruler **ret);
void ruler_free(struct ruler *r);

/* Command lines are read through c, off the event loop: a decision that
 * needs one not read yet waits for it, and c's ready callback calls
 * ruler_evaluate() again with the trigger as the tag. Without (NULL, the
 * default), they are read at once. */
void ruler_read_cmdlines_with(struct ruler *r, struct cmdlines *c);

/* The config and topology to decide by, until the next call. */
void ruler_use(struct ruler *r, const struct config *c, const struct topology *t);

/* Whether p is a rule's or a hand's: the automatic policy's members are
 * its groups'. */
bool ruler_owns(const struct placement *p);

/* Decides pid under the rules. Returns 1 when it pinned a process whose
 * threads take sets in turn (thread events are needed), else 0. */
int ruler_evaluate(struct ruler *r, pid_t pid, enum ruling_trigger trigger);
/* ruler_evaluate(pid, RULING_EXEC) after an exec's record, seen (NULL:
 * none), which stands for /proc/PID/stat where pid was pinned early and
 * its program can have run only with the pin (pinned_first):
 * placements_early_stat(). */
int ruler_evaluate_exec(struct ruler *r, pid_t pid, const struct placement_seen *seen, bool pinned_first);
/* An exec of pid: whether it may concern the rules (a process they know,
 * or one whose comm a rule names or may name by exe, cmdline or context),
 * and so needs ruler_evaluate_exec() next. A program a rule
 * names by comm or exe alone is pinned here already, its main thread only;
 * that evaluation completes the pin or takes it back (*pinned says whether
 * it was). comm is the new program's, as the exec event told it; NULL: it
 * is read, which is all a stranger costs. seen: what the event told of
 * the process besides, or NULL (placements_pin_early()). ahead: where it
 * goes may be taken from ruler_decide_ahead(), nothing having changed
 * since. */
bool ruler_exec(struct ruler *r, pid_t pid, const char *comm, const struct placement_seen *seen, bool ahead,
		bool *pinned);
/* An exec by pid has begun to replace its program with one whose comm
 * will be comm (the last part of its path): /proc shows the old program
 * yet, so where a rule pins comm by itself (ruler_decide_ahead()'s table)
 * it is pinned, its main thread only, and nothing more; the decision comes
 * next, from the record where it can stand for /proc
 * (ruler_evaluate_exec()), or else at the record of the exec's rename
 * (ruler_exec()).
 * Told again of the same task, it keeps the pin; an exec that never named
 * the task leaves it to placements_settle_early(). Returns whether it
 * pinned. */
bool ruler_exec_entering(struct ruler *r, pid_t pid, const char *comm, const struct placement_seen *seen);
/* Decides where an exec of each name a rule pins by comm alone goes, with
 * the placements as they are, so that ruler_exec() finds it in a table:
 * for the wake-up at real-time priority, where each step between the
 * kernel's record and the pin counts. Called just before that sleep, it
 * decides again only what changed (the rules, the load a rule balances). */
void ruler_decide_ahead(struct ruler *r);
/* A fork: a thread of a spread process takes its set; a process inherits
 * its parent's placement. */
void ruler_fork(struct ruler *r, pid_t parent_tgid, pid_t child_pid, pid_t child_tgid);
/* Children that inherited a placement while no event told of them, and
 * threads of spread processes made meanwhile. Returns whether a spread
 * process needs thread events. */
bool ruler_sweep(struct ruler *r);

/* After the rules changed: processes whose rule is gone get their original
 * back; the rest are decided again. Returns 1 as ruler_evaluate() does. */
int ruler_redecide(struct ruler *r);
/* Gives every process a rule or a hand pinned its original back and forgets
 * them. At exit, two kinds stay for the ledger to keep until the next
 * start: those released by hand (still left alone then), and any whose
 * original could not be put back (still owed). */
void ruler_restore_all(struct ruler *r, bool at_exit);
/* What a killed ccxd left placed and a restarted one takes back: NULL,
 * or why it goes back to its original (placements_readopt()). */
const char *ruler_keep_on_restart(const struct ruler *r, const struct ledger_entry *e);
/* The processes it pinned. */
size_t ruler_pinned(const struct ruler *r);

/* By hand: pin pid to one CCX, or put back its original affinity. Return 0 or
 * -ESRCH (no such process), -ENOENT (no such CCX), -EPERM (kernel thread),
 * -EXDEV (its cgroup cpuset excludes that CCX), -ENOTCONN (not pinned),
 * -ECANCELED (mode = off), other -errno from the kernel. */
int ruler_pin(struct ruler *r, pid_t pid, unsigned ccx, const struct placement **ret);
int ruler_unpin(struct ruler *r, pid_t pid, const struct placement **ret);

/* What the rules make of pid (rules.h), read as a decision reads it but
 * every key at once. -ESRCH: no such process, or a kernel thread;
 * -ENOMEM; -EINPROGRESS when its command line is being read, off the loop
 * (ask again in the cmdlines' ready callback), unless settle: then it is
 * explained without. */
int ruler_explain(struct ruler *r, pid_t pid, bool settle, struct rules_explanation *ret);
