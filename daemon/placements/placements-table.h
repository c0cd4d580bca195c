/* The table of placements inside: what placements.c and
 * placements-ledger.c share, and nothing outside them includes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "placements.h"

/* The ledger is written at most this often: a stream of rule-matched execs
 * would otherwise write it for nearly every one (30 us on a tmpfs, ten
 * times that on a disk, and the whole table formatted each time). What it
 * does not hold yet is in the log, appended before each narrowing. */
#define LEDGER_GAP_USEC (1000 * 1000)

/* Chained hash on pid: a few thousand entries at most, each looked up on
 * every fork/exec/exit event, so lookups must be O(1). */
struct entry {
	struct placement p;
	struct entry *next;
};

struct placements {
	sd_event *event;
	const char *root;
	struct entry **buckets;
	size_t n_buckets;          /* a power of two */
	size_t size;
	struct placements_stats stats;
	char *runtime_dir;         /* where the ledger goes; NULL: nowhere */
	sd_event_source *ledger_sync;  /* writes it, once per burst of changes */
	uint64_t ledger_usec;      /* CLOCK_MONOTONIC of the last write */
	char *ledger_text;         /* what was last written, NULL when nothing is owed */
	int ledger_error;          /* of the last write, 0 or -errno: logged when it changes */
	bool ledger_kept;          /* the last ccxd's could not all be taken back: never rewritten */
	int log_fd;                /* the ledger's log (LEDGER_LOG_FILE), opened at the first line; -1 */
	int log_error;             /* of the last line written, 0 or -errno: logged when it changes */
	int exits;                 /* epoll of every entry's pidfd: readable once its process is gone */
	struct placement_early early;  /* pid 0: none */
	int early_pidfd;           /* the process pinned early (opened before the pin, or after it with
				    * the record's start time); -1 once an entry has it */
	void (*observer)(void *userdata, pid_t pid, bool in);
	void *observer_data;
};

/* An entry, to change: outside the module entries are read through const
 * pointers, and every one of them is this table's own. */
static inline struct placement *placements_entry(const struct placement *p) {
	return (struct placement *)p;
}

/* A line in the ledger's log for p, about to be set to cpus (or just set,
 * at its exec): what is owed, before the file is next written. */
void placements_note_owed(struct placements *pl, const struct placement *p, const cpu_set_t *cpus);

/* p's rule's name, a copy (NULL: none). -ENOMEM. */
int placements_entry_set_rule(struct placement *p, const char *rule);

/* The timer that writes the ledger (placements_owe_changed()). */
int placements_on_ledger_sync(sd_event_source *s, uint64_t usec, void *userdata);
