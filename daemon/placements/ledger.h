/* What ccxd owes: the affinity every process it changed had before, kept in
 * the runtime directory so that a ccxd killed without a chance to put them
 * back finds them again when it restarts; and the processes released by
 * hand, which stay released across a restart as they do across a reload.
 * The file is rewritten whole and renamed into place, so it is always
 * either the old list or the new one. */
#pragma once

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

#define LEDGER_FILE "originals.json"
/* Each narrowing, a line appended before it is made: what the file does
 * not hold yet (it is rewritten at most once a second). Emptied each time
 * the file is written. */
#define LEDGER_LOG_FILE "originals.log"

enum ledger_owner {
	LEDGER_RULE,              /* a rule placed it */
	LEDGER_HAND,              /* ccxctl pin placed it */
	LEDGER_AUTO,              /* the automatic policy moved it */
	LEDGER_RELEASED,          /* ccxctl unpin gave it back: left alone until it execs */
	_LEDGER_OWNER_MAX,
};

struct ledger_entry {
	pid_t pid;
	uint64_t start_time;      /* with pid, names the process */
	char comm[PROCFS_COMM_MAX];
	enum ledger_owner owner;
	char rule[256];           /* LEDGER_RULE: the rule's name (a config line is shorter) */
	pid_t inherited_from;     /* the parent it inherited its placement from, 0 if none */
	cpu_set_t original;       /* what it had before ccxd touched it */
	cpu_set_t cpus;           /* what ccxd gave it (released: its original again) */
};

/* The file's text for n entries. Pure. Returns 0, or -ENOMEM. */
int ledger_format(const struct ledger_entry *e, size_t n, char **ret);

/* Parses a ledger's text. Pure. Returns 0 with a malloc'd array (NULL when
 * n is 0), or -EINVAL with *error saying what is wrong, or -ENOMEM. */
int ledger_parse(const char *text, struct ledger_entry **ret, size_t *n, char **error);

/* The log's line for e, "PID START_TIME ORIGINAL CPUS\n" (cpu lists), into
 * buf. Pure. Returns its length, or -ENOBUFS. */
int ledger_log_line(const struct ledger_entry *e, char *buf, size_t size);

/* Applies a log's text to the n entries of *e (a ledger's): a line for a
 * process there gives it what ccxd set since; one for a process not there
 * adds it, owner LEDGER_AUTO (whose it was is not in the log). A line that
 * does not parse, and what follows it (a line cut short by a crash), is
 * ignored. Pure. Returns 0, or -ENOMEM. */
int ledger_apply_log(const char *text, struct ledger_entry **e, size_t *n);

/* Writes text to dir/LEDGER_FILE through a temporary file and rename(). */
int ledger_write(const char *dir, const char *text);

/* Reads and parses dir/LEDGER_FILE, with dir/LEDGER_LOG_FILE applied over
 * it: -ENOENT when there is neither. */
int ledger_read(const char *dir, struct ledger_entry **ret, size_t *n, char **error);

/* Removes dir/LEDGER_FILE and its log: nothing is owed any more. */
int ledger_remove(const char *dir);

const char *ledger_owner_to_string(enum ledger_owner o);
