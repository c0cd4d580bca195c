/* Every process whose affinity ccxd changed or decided about, whoever
 * asked: a rule, a hand (ccxctl pin), the automatic policy. The one owner
 * of affinities and the only caller of the actuator: policies decide, and
 * this module carries the decision out (the pin at exec included), keeps
 * what each process had before (its original), follows children that
 * inherit a placement, and keeps the originals owed in the runtime
 * directory's ledger (placements-ledger.c), so that a ccxd restarted after
 * a crash gives them back. Outside this module an entry is read, never
 * written: every change goes through a verb here.
 *
 * A process is named by its pid and start time: each entry holds a pidfd
 * that names that very process, and that tells when it exits (the entry
 * goes then). */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "ledger.h"
#include "procfs.h"

enum placement_owner {
	PLACEMENT_RULE,           /* a rule decided it (rule names which) */
	PLACEMENT_HAND,           /* ccxctl pin */
	PLACEMENT_AUTO,           /* a member of a group of the automatic policy */
};

enum placement_state {
	PLACEMENT_PINNED,         /* ccxd set its affinity */
	PLACEMENT_DRY_RUN,        /* ccxd would set it (mode = dry-run) */
	PLACEMENT_SKIPPED,        /* a rule matched but ccxd left it alone: see reason */
	PLACEMENT_IGNORED,        /* its rule says policy = ignore */
	PLACEMENT_RELEASED,       /* unpinned by hand; left alone until it execs again */
};

struct placement {
	pid_t pid;
	uint64_t start_time;      /* clock ticks after boot, from /proc/PID/stat */
	char comm[PROCFS_COMM_MAX];
	enum placement_owner owner;
	enum placement_state state;
	char *rule;               /* PLACEMENT_RULE: the rule's name */
	bool have_original;
	cpu_set_t original;       /* affinity before ccxd first touched it */
	cpu_set_t cpus;           /* affinity ccxd gave it (or would give it) */
	pid_t inherited_from;     /* the parent it inherited its placement from, 0 if none */
	cpu_set_t *spread;        /* policy = spread: the CPU sets its threads take in turn */
	size_t n_spread;
	unsigned spread_next;     /* which set the next thread takes */
	pid_t *spread_placed;     /* the threads given a set, sorted: not all below the highest
				   * one, as tids start again from low after kernel.pid_max */
	size_t n_spread_placed, allocated_spread_placed;
	char reason[160];
	int pidfd;                /* names this very process */
};

struct placements_stats {
	uint64_t pins;            /* affinities set */
	uint64_t restores;        /* original affinities put back */
	uint64_t pin_failures;
	uint64_t readopted;       /* processes taken back after a restart */
};

struct placements;

/* The ledger goes to runtime_dir (NULL: nowhere, for tests). */
int placements_new(sd_event *event, const char *root, const char *runtime_dir, struct placements **ret);
void placements_free(struct placements *pl);

/* observer is told of every process that enters the table (in) or leaves it. */
void placements_observe(struct placements *pl, void (*observer)(void *userdata, pid_t pid, bool in), void *userdata);

const struct placement *placements_get(const struct placements *pl, pid_t pid);
size_t placements_count(const struct placements *pl);
/* The entry after p, in no particular order (p NULL: the first), or NULL.
 * Get the next one before removing p. */
const struct placement *placements_next(const struct placements *pl, const struct placement *p);

/* Every entry's pid, into a malloc'd array (NULL when out of memory): to
 * act on each while entries come and go. */
pid_t *placements_pids(const struct placements *pl, size_t *n);

/* The entry for st's process, made on first sight (state SKIPPED, owner
 * RULE, no original): one of an earlier process with the same pid goes.
 * NULL when the process is gone already (errno ESRCH), or out of memory
 * (ENOMEM). */
const struct placement *placements_track(struct placements *pl, const struct procfs_stat *st);
/* Forgets pid, without touching its affinity: it is gone, or not ccxd's. */
void placements_remove(struct placements *pl, pid_t pid);
/* Removes the entries of processes that have exited since the last call;
 * returns how many. */
size_t placements_reap(struct placements *pl);

/* The original p would be claimed with: what an earlier owner kept, or
 * its affinity now. -ESRCH when it is gone. */
int placements_original_of(const struct placement *p, cpu_set_t *ret);
/* The affinity of pid's main thread now (0: ccxd's own). -ESRCH when gone. */
int placements_affinity(pid_t pid, cpu_set_t *ret);

/* p becomes owner's. Its original is known (the mask the caller saw
 * before it set one itself), or else what it has now, or what an earlier
 * owner kept. -EPERM when that is narrower than allowed and not force:
 * somebody else chose it by hand (nothing is changed then); -ESRCH when it
 * is gone. */
int placements_claim(struct placements *pl, const struct placement *p, enum placement_owner owner, const char *rule,
		     const cpu_set_t *allowed, bool force, const cpu_set_t *known);
/* p is a rule's (rule: its name), and carries no parent's placement any
 * more. -ENOMEM: out of memory for the name. */
int placements_rule(struct placements *pl, const struct placement *p, const char *rule);

/* Sets p's affinity to cpus (with p->spread, the sets thread by thread) and
 * marks it pinned. -ESRCH: gone (the caller removes it); other -errno:
 * refused, logged. */
int placements_pin(struct placements *pl, const struct placement *p, const cpu_set_t *cpus);
/* A decision that sets no affinity: p is left alone (SKIPPED, IGNORED),
 * or would be pinned to cpus (DRY_RUN; cpus NULL for the others). */
void placements_decide(struct placements *pl, const struct placement *p, enum placement_state state,
		       const cpu_set_t *cpus);

/* Puts back p's original, when ccxd pinned it, and forgets its spread sets;
 * p is SKIPPED then, unless the caller says otherwise (or removes it).
 * -ESRCH: gone. */
int placements_give_back(struct placements *pl, const struct placement *p);
/* The same by hand: p is RELEASED, left alone until it execs again. */
int placements_release(struct placements *pl, const struct placement *p);

/* Takes ownership of sets (NULL, 0: not spread). */
void placements_set_spread(struct placements *pl, const struct placement *p, cpu_set_t *sets, size_t n);
void placements_set_reason(struct placements *pl, const struct placement *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the pin at exec --------------------------------------------------- */

/* A program a rule names by comm or exe alone is pinned as soon as its exec
 * is reported, its one thread only, and everything that can wait comes
 * after (the identity against its start time, the threads made meanwhile,
 * the table, the log). Its full decision comes next, and either takes the
 * pin over (placements_track_early() and placements_pin(), or
 * placements_confirm_early() when it stands as it is) or leaves it to
 * placements_settle_early(), which takes it back.
 *
 * What the kernel's record of the exec told of the process (seen): its
 * affinity and start time then. With it the affinity is set first and the
 * pidfd opened after, so that the pin waits for no other system call: the
 * process still alive with that start time when its stat is read next
 * (placements_track_early()) held the pid all along, the pin included;
 * one whose pidfd cannot be opened then gets its affinity back at once.
 * Without it (NULL), the pidfd is opened and the affinity read first.
 * The record's parent, comm and pid inode stand for its stat where its
 * program can have run only with the pin (placements_early_stat()). */
struct placement_seen {
	cpu_set_t mask;           /* offline CPUs included */
	uint64_t start_time;      /* clock ticks after boot */
	uint64_t pid_ino;         /* its pid's inode in pidfs, as fstat() of a pidfd gives it; 0: unknown */
	uint64_t exec_ns;         /* which exec of the task the record told of (execs_expect()) */
	pid_t ppid;
	char comm[PROCFS_COMM_MAX];   /* "": unknown */
};

/* Pins pid's main thread to cpus when its affinity is still expected, every
 * online CPU (the caller decided for that one). Returns 0, -ESTALE when
 * the affinity is another, or -errno. An earlier early pin is settled
 * first. */
int placements_pin_early(struct placements *pl, pid_t pid, const cpu_set_t *expected, const cpu_set_t *cpus,
			 const struct placement_seen *seen);

struct placement_early {
	pid_t pid;
	cpu_set_t original;       /* what it had: what the caller expected */
	cpu_set_t cpus;           /* what its main thread got */
	uint64_t start_time;      /* what the record said; 0: unknown (the pidfd came first) */
	bool identified;          /* its pidfd is the record's process by its inode (placements_early_stat()) */
};
/* The process pinned early and not settled yet, or NULL. */
const struct placement_early *placements_early(const struct placements *pl);
/* The entry for the process pinned early, st read after the pin: the pidfd
 * names it, so st is its own when it is still alive (and, with the pidfd
 * opened after the pin, started when the record said). NULL with errno
 * ESRCH when it is not, or when it has an entry already. */
const struct placement *placements_track_early(struct placements *pl, const struct procfs_stat *st);
/* The process pinned early, pid, as seen, its exec's record, tells of it,
 * where its new program can have run only with the pin (pinned_first:
 * the caller knows, execs_pinned_first()): it had one thread as the exec
 * named the task, and any thread made since has the pin, so the record is
 * all its stat would tell, save whose the pidfd opened after the pin is,
 * which the record's pid inode says. Returns 0 and *ret, for
 * placements_track_early() and placements_confirm_early() to take as
 * read; -ESTALE when the record cannot stand for /proc (read it then). */
int placements_early_stat(struct placements *pl, pid_t pid, const struct placement_seen *seen, bool pinned_first,
			  struct procfs_stat *ret);
/* p, pinned early, is pinned to cpus in full: st showed one thread, so any
 * thread made since was born with the pin, and there is nothing more to
 * set. false when cpus are not those of the early pin (placements_pin()
 * then). */
bool placements_confirm_early(struct placements *pl, const struct placement *p, const struct procfs_stat *st,
			      const cpu_set_t *cpus);
/* Takes back an early pin that its entry does not hold as pinned: the
 * decision was not to pin after all, or never came; where its main thread
 * still has it (not where somebody set another since, nor where the pid
 * is another process's). */
void placements_settle_early(struct placements *pl);

/* ---- children ---------------------------------------------------------- */

/* st's process carries parent's placement (a rule's or a hand's): it is
 * ccxd's too, with the same original to go back to. */
const struct placement *placements_inherit(struct placements *pl, const struct procfs_stat *st,
					   const struct placement *parent);
/* A process no rule matches, with a pinned parent: adopted when it carries
 * the parent's placement, or its original (forked before the pin landed:
 * the placement is set now). Any other mask was chosen by somebody else.
 * Returns whether it was adopted. */
bool placements_adopt_if_inherited(struct placements *pl, const struct procfs_stat *st);
/* Every child of a pinned process that inherited its placement while no
 * event told of it, grandchildren included. */
void placements_adopt_children(struct placements *pl);
/* A child that a seated member of a group forked carries a seat chosen
 * for the member: unless it is ccxd's itself or in a group (in_group), it
 * gets the member's original back, and so do its own children that
 * inherited the same seat. */
void placements_return_inherited(struct placements *pl, bool (*in_group)(void *userdata, pid_t pid),
				 void *userdata);

/* ---- policy = spread --------------------------------------------------- */

/* A thread just made: the next set, unless it was given one already. */
void placements_spread_thread(struct placements *pl, const struct placement *p, pid_t tid);
/* Threads made while no event told of them take their turn now. */
void placements_spread_catch_up(struct placements *pl, const struct placement *p);

/* ---- the ledger -------------------------------------------------------- */

/* The originals owed are written to the ledger once the current event is
 * handled, or at most once a second (the log holds what it does not
 * yet). Called by every change here; and by
 * the manager after a burst of exits. */
void placements_owe_changed(struct placements *pl);
/* Writes it now (at exit): what is still owed stays for the next start;
 * with nothing owed the file goes. */
int placements_sync_ledger(struct placements *pl);

struct placements_readopt_ops {
	/* For each process a killed ccxd left placed that still runs as it was
	 * left: NULL to take it back as it was (a rule's or a hand's), or why
	 * it gets its original back instead. */
	const char *(*keep)(void *userdata, const struct ledger_entry *e);
	/* Each rule's process taken back, once all are: to decide it again
	 * under the rules as they are now. */
	void (*decide)(void *userdata, pid_t pid);
};

/* Takes back what the ledger names. Out of memory, the file is left as it
 * is for the next start, and never rewritten by this one. */
int placements_readopt(struct placements *pl, const struct placements_readopt_ops *ops, void *userdata);

/* ccxd --give-back, run by root once ccxd has stopped for good (the unit's
 * OnFailure=): every process the ledger in runtime_dir names that still
 * runs as ccxd left it gets its original back, and the ledger goes. The
 * file is read as root reads what ccxd's own user may write: a regular
 * file, no link, of a ledger's size. */
int placements_give_back_owed(const char *root, const char *runtime_dir);

struct placements_stats placements_stats(const struct placements *pl);

const char *placement_state_to_string(enum placement_state s);
