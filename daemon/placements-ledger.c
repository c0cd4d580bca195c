#include <errno.h>
#include <inttypes.h>
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

/* Puts e's process back as it was, when a restarted ccxd will not keep it. */
static void give_back_entry(struct placements *pl, const struct ledger_entry *e, const char *why) {
	char list[CPULIST_MAX];
	int fd = actuator_open(pl->root, e->pid, e->start_time), r;

	if (fd < 0)
		return;
	r = actuator_apply(pl->root, e->pid, fd, &e->original);
	close(fd);
	if (r < 0 && r != -ESRCH)
		log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", e->comm, (int)e->pid);
	else if (r >= 0) {
		pl->stats.restores++;
		log_info("Restored %s[%d] to CPUs %s, as before ccxd last ran: %s", e->comm, (int)e->pid,
			 cpulist_format(&e->original, list, sizeof(list)), why);
	}
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

