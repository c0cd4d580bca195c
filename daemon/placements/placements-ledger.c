#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "log.h"
#include "placements-table.h"

/* The ledger of originals owed (placements.h), written to the runtime
 * directory as the table changes, and read back at start. */

/* ---- the ledger -------------------------------------------------------- */

void placements_owe_changed(struct placements *pl) {
	int enabled = SD_EVENT_OFF;
	uint64_t now, at;

	if (!pl->ledger_sync || sd_event_source_get_enabled(pl->ledger_sync, &enabled) < 0 || enabled != SD_EVENT_OFF)
		return;   /* a write is due already */
	if (sd_event_now(pl->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	at = pl->ledger_usec + LEDGER_GAP_USEC > now ? pl->ledger_usec + LEDGER_GAP_USEC : now;
	sd_event_source_set_time(pl->ledger_sync, at);
	sd_event_source_set_enabled(pl->ledger_sync, SD_EVENT_ONESHOT);
}

static enum ledger_owner ledger_owner_of(const struct placement *p) {
	if (p->state == PLACEMENT_RELEASED)
		return LEDGER_RELEASED;
	return p->owner == PLACEMENT_AUTO ? LEDGER_AUTO : p->rule ? LEDGER_RULE : LEDGER_HAND;
}

/* Every process whose affinity ccxd changed and has not given back, and
 * those released by hand (left alone across a restart too). */
static int collect_owed(const struct placements *pl, struct ledger_entry **ret, size_t *ret_n) {
	struct ledger_entry *e = calloc(pl->size + 1, sizeof(*e));
	size_t n = 0;

	if (!e)
		return -ENOMEM;
	for (const struct placement *p = placements_next(pl, NULL); p; p = placements_next(pl, p)) {
		struct ledger_entry *x = &e[n];
		if ((p->state != PLACEMENT_PINNED && p->state != PLACEMENT_RELEASED) || !p->have_original)
			continue;
		*x = (struct ledger_entry){ .pid = p->pid, .start_time = p->start_time, .owner = ledger_owner_of(p),
					    .inherited_from = p->inherited_from, .original = p->original,
					    .cpus = p->state == PLACEMENT_RELEASED ? p->original : p->cpus };
		memcpy(x->comm, p->comm, sizeof(x->comm));
		snprintf(x->rule, sizeof(x->rule), "%s", x->owner == LEDGER_RULE ? p->rule : "");
		n++;
	}
	*ret = e;
	*ret_n = n;
	return 0;
}

void placements_note_owed(struct placements *pl, const struct placement *p, const cpu_set_t *cpus) {
	struct ledger_entry e = { .pid = p->pid, .start_time = p->start_time, .original = p->original, .cpus = *cpus };
	char line[2 * CPULIST_MAX + 64], path[PATH_MAX];
	int len, r = 0;

	if (!pl->runtime_dir || pl->ledger_kept || !p->have_original)
		return;
	if (pl->log_fd < 0 && snprintf(path, sizeof(path), "%s/%s", pl->runtime_dir, LEDGER_LOG_FILE) < (int)sizeof(path))
		pl->log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	len = ledger_log_line(&e, line, sizeof(line));
	if (pl->log_fd < 0)
		r = -errno;
	else if (len < 0)
		r = len;
	else if (write(pl->log_fd, line, (size_t)len) != len)   /* O_APPEND: whole lines, in order */
		r = -EIO;
	if (r < 0 && r != pl->log_error)
		log_warning_errno(r, "Failed to note in %s/%s the original affinity owed: %m", pl->runtime_dir,
				  LEDGER_LOG_FILE);
	pl->log_error = r;
}

/* What the log held is in the file now: it starts afresh. */
static void log_written(struct placements *pl, bool removed) {
	if (pl->log_fd < 0)
		return;
	if (removed) {   /* the file went with the ledger: a new one at the next line */
		close(pl->log_fd);
		pl->log_fd = -1;
	} else if (ftruncate(pl->log_fd, 0) < 0)
		log_warning_errno(-errno, "Failed to empty %s/%s: %m", pl->runtime_dir, LEDGER_LOG_FILE);
}

static int compare_entry(const void *a, const void *b) {
	pid_t x = ((const struct ledger_entry *)a)->pid, y = ((const struct ledger_entry *)b)->pid;

	return (x > y) - (x < y);
}

int placements_sync_ledger(struct placements *pl) {
	struct ledger_entry *e;
	size_t n;
	char *text;
	int r;

	if (!pl->runtime_dir || pl->ledger_kept)
		return 0;
	r = collect_owed(pl, &e, &n);
	if (r >= 0) {
		qsort(e, n, sizeof(*e), compare_entry);   /* the same text for the same debts */
		r = ledger_format(e, n, &text);
		free(e);
	}
	if (r < 0)
		return log_warning_errno(r, "Failed to list the original affinities owed: %m");
	if (pl->ledger_text && strcmp(text, pl->ledger_text) == 0) {
		free(text);
		log_written(pl, false);
		return 0;
	}
	r = n > 0 ? ledger_write(pl->runtime_dir, text) : ledger_remove(pl->runtime_dir);
	if (r < 0) {
		/* Once per kind of failure: it is retried at every change. */
		if (r != pl->ledger_error)
			log_warning_errno(r, "Failed to write %s/%s; a restart after a crash would not know the "
					  "original affinities: %m", pl->runtime_dir, LEDGER_FILE);
		pl->ledger_error = r;
		free(text);
		return r;
	}
	log_written(pl, n == 0);
	if (pl->ledger_error)
		log_info("Wrote %s/%s again", pl->runtime_dir, LEDGER_FILE);
	pl->ledger_error = 0;
	free(pl->ledger_text);
	pl->ledger_text = text;
	return 0;
}

int placements_on_ledger_sync(sd_event_source *s, uint64_t usec, void *userdata) {
	struct placements *pl = userdata;

	(void)s;
	pl->ledger_usec = usec;
	placements_sync_ledger(pl);
	return 0;
}

/* Puts e's process back as it was: 1 when it did, 0 when the process is
 * gone, or -errno. */
static int restore_entry(const char *root, const struct ledger_entry *e, const char *why) {
	char list[CPULIST_MAX];
	int fd = actuator_open(root, e->pid, e->start_time), r;

	if (fd < 0)
		return 0;
	r = actuator_apply(root, e->pid, fd, &e->original);
	close(fd);
	if (r < 0 && r != -ESRCH)
		return log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", e->comm, (int)e->pid);
	if (r < 0)
		return 0;
	log_info("Restored %s[%d] to CPUs %s, as before ccxd last ran: %s", e->comm, (int)e->pid,
		 cpulist_format(&e->original, list, sizeof(list)), why);
	return 1;
}

/* Puts e's process back as it was, when a restarted ccxd will not keep it. */
static void give_back_entry(struct placements *pl, const struct ledger_entry *e, const char *why) {
	if (restore_entry(pl->root, e, why) > 0)
		pl->stats.restores++;
}

/* Whether e's process still runs as a ccxd that stopped left it: the same
 * process (pid and start time), on what ccxd gave it or within it. */
static bool as_left(const char *root, const struct ledger_entry *e) {
	struct procfs_stat st;
	cpu_set_t current;

	return procfs_read_stat(root, e->pid, &st) == 0 && st.start_time == e->start_time &&
	       actuator_get(e->pid, &current) == 0 && (e->owner == LEDGER_RELEASED || cpulist_is_subset(&current, &e->cpus));
}

int placements_give_back_owed(const char *root, const char *runtime_dir) {
	struct ledger_entry *e;
	size_t n, given = 0;
	char *error = NULL;
	int r = ledger_read(runtime_dir, &e, &n, &error);

	if (r == -ENOENT) {
		log_info("Nothing owed: %s/%s is not there", runtime_dir, LEDGER_FILE);
		return 0;
	}
	if (r < 0) {
		log_warning("Ignoring %s/%s: %s", runtime_dir, LEDGER_FILE, error ? error : strerror(-r));
		free(error);
		return r;
	}
	for (size_t i = 0; i < n; i++)
		if (e[i].owner != LEDGER_RELEASED && as_left(root, &e[i]) &&
		    restore_entry(root, &e[i], "ccxd stopped for good") > 0)
			given++;
	free(e);
	r = ledger_remove(runtime_dir);
	if (r < 0)
		log_warning_errno(r, "Failed to remove %s/%s: %m", runtime_dir, LEDGER_FILE);
	log_info("Gave %zu process%s %s original CPU affinity back", given, given == 1 ? "" : "es",
		 given == 1 ? "its" : "their");
	return 0;
}

/* e's process, still running as the killed ccxd left it: taken back.
 * -ENOMEM when there was no memory for its entry. */
static int take_back(struct placements *pl, const struct ledger_entry *e, const struct procfs_stat *st) {
	struct placement *p = placements_entry(placements_track(pl, st));

	if (!p)
		return errno == ENOMEM ? -ENOMEM : 0;
	p->original = e->original;
	p->have_original = true;
	if (e->owner == LEDGER_RELEASED) {
		/* Left alone until it executes another program, restart or not. */
		p->state = PLACEMENT_RELEASED;
		placements_set_reason(pl, p, "released by hand; left alone until it executes a new program");
		return 0;
	}
	p->owner = e->owner == LEDGER_RULE ? PLACEMENT_RULE : PLACEMENT_HAND;
	p->state = PLACEMENT_PINNED;
	p->cpus = e->cpus;
	p->inherited_from = e->inherited_from;
	placements_entry_set_rule(p, e->owner == LEDGER_RULE ? e->rule : NULL);
	placements_set_reason(pl, p, e->owner == LEDGER_HAND ? "pinned by hand (before ccxd restarted)"
			     : "rule %s (before ccxd restarted)", e->rule);
	pl->stats.readopted++;
	return 0;
}

/* Out of memory while taking back what a killed ccxd owed: what its ledger
 * names is not all known here, so the file stays as it is, for the next
 * start to take back, and what is owed from now on is not written. */
static void keep_ledger(struct placements *pl) {
	pl->ledger_kept = true;
	log_error("Out of memory taking back what ccxd had placed before it restarted: %s/%s stays as it is, "
		  "and is not rewritten until the next start", pl->runtime_dir, LEDGER_FILE);
}

int placements_readopt(struct placements *pl, const struct placements_readopt_ops *ops, void *userdata) {
	struct ledger_entry *e;
	size_t n;
	char *error = NULL;
	int r;

	if (!pl->runtime_dir)
		return 0;
	r = ledger_read(pl->runtime_dir, &e, &n, &error);
	if (r == -ENOENT)
		return 0;
	if (r == -ENOMEM) {
		keep_ledger(pl);
		return r;
	}
	if (r < 0) {
		log_warning("Ignoring %s/%s: %s", pl->runtime_dir, LEDGER_FILE, error ? error : strerror(-r));
		free(error);
		placements_owe_changed(pl);   /* replaced by what is owed now */
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct procfs_stat st;
		cpu_set_t current;
		const char *why;

		if (procfs_read_stat(pl->root, e[i].pid, &st) < 0 || st.start_time != e[i].start_time ||
		    actuator_get(e[i].pid, &current) < 0) {
			e[i].pid = 0;   /* gone: nothing owed */
			continue;
		}
		if (e[i].owner != LEDGER_RELEASED && !cpulist_is_subset(&current, &e[i].cpus)) {
			log_info("%s[%d] was moved by somebody else since ccxd last ran; leaving it alone", e[i].comm,
				 (int)e[i].pid);
			e[i].pid = 0;
			continue;
		}
		why = e[i].owner == LEDGER_RELEASED ? NULL : ops->keep(userdata, &e[i]);
		if (why) {
			give_back_entry(pl, &e[i], why);
			e[i].pid = 0;
		} else if (take_back(pl, &e[i], &st) == -ENOMEM) {
			keep_ledger(pl);
			e[i].pid = 0;
		}
	}
	if (pl->stats.readopted)
		log_info("Took back %" PRIu64 " process%s that ccxd had placed before it restarted", pl->stats.readopted,
			 pl->stats.readopted == 1 ? "" : "es");
	/* Under the rules as they are now, once all are back. */
	for (size_t i = 0; i < n; i++)
		if (e[i].pid && e[i].owner == LEDGER_RULE && !e[i].inherited_from)
			ops->decide(userdata, e[i].pid);
	free(e);
	placements_owe_changed(pl);
	return 0;
}

