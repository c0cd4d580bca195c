#include "placements.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actuator.h"
#include "cpulist.h"
#include "log.h"
#include "placements-table.h"
#include "util.h"

static size_t bucket_of(size_t n_buckets, pid_t pid) {
	return ((size_t)pid * 2654435761u) & (n_buckets - 1);
}

static const char *const state_names[] = {
	[PLACEMENT_PINNED] = "pinned",
	[PLACEMENT_DRY_RUN] = "dry-run",
	[PLACEMENT_SKIPPED] = "skipped",
	[PLACEMENT_IGNORED] = "ignored",
	[PLACEMENT_RELEASED] = "released",
};

/* "unknown" past the end: status.c lists the states up to that name. */
const char *placement_state_to_string(enum placement_state s) {
	const char *name = NAME_OF(state_names, s);

	return name ? name : "unknown";
}

int placements_new(sd_event *event, const char *root, const char *runtime_dir, struct placements **ret) {
	struct placements *pl = calloc(1, sizeof(*pl));
	int r;

	if (!pl)
		return -ENOMEM;
	pl->event = event;
	pl->root = root;
	pl->n_buckets = 256;
	pl->early_pidfd = -1;
	pl->log_fd = -1;
	pl->buckets = calloc(pl->n_buckets, sizeof(*pl->buckets));
	pl->exits = epoll_create1(EPOLL_CLOEXEC);
	if (pl->exits < 0) {
		r = -errno;
		placements_free(pl);
		return r;
	}
	if (!pl->buckets || (runtime_dir && !(pl->runtime_dir = strdup(runtime_dir)))) {
		placements_free(pl);
		return -ENOMEM;
	}
	if (pl->runtime_dir && event) {
		r = sd_event_add_time(event, &pl->ledger_sync, CLOCK_MONOTONIC, 0, 1000, placements_on_ledger_sync, pl);
		if (r < 0) {
			placements_free(pl);
			return r;
		}
		sd_event_source_set_enabled(pl->ledger_sync, SD_EVENT_OFF);
	}
	*ret = pl;
	return 0;
}

static void entry_free(struct entry *e) {
	/* Closing the pidfd takes it out of the epoll of exits too. */
	if (e->p.pidfd >= 0)
		close(e->p.pidfd);
	free(e->p.rule);
	free(e->p.spread);
	free(e->p.spread_placed);
	free(e);
}

void placements_free(struct placements *pl) {
	if (!pl)
		return;
	for (size_t i = 0; i < pl->n_buckets; i++)
		for (struct entry *e = pl->buckets ? pl->buckets[i] : NULL, *next; e; e = next) {
			next = e->next;
			entry_free(e);
		}
	sd_event_source_disable_unref(pl->ledger_sync);
	if (pl->early_pidfd >= 0)
		close(pl->early_pidfd);
	if (pl->log_fd >= 0)
		close(pl->log_fd);
	if (pl->exits >= 0)
		close(pl->exits);
	free(pl->buckets);
	free(pl->runtime_dir);
	free(pl->ledger_text);
	free(pl);
}

void placements_observe(struct placements *pl, void (*observer)(void *userdata, pid_t pid, bool in), void *userdata) {
	pl->observer = observer;
	pl->observer_data = userdata;
}

const struct placement *placements_get(const struct placements *pl, pid_t pid) {
	for (struct entry *e = pl->buckets[bucket_of(pl->n_buckets, pid)]; e; e = e->next)
		if (e->p.pid == pid)
			return &e->p;
	return NULL;
}

size_t placements_count(const struct placements *pl) {
	return pl->size;
}

const struct placement *placements_next(const struct placements *pl, const struct placement *p) {
	size_t i = 0;

	if (p) {
		const struct entry *e = (const struct entry *)p;   /* p is an entry's first member */
		if (e->next)
			return &e->next->p;
		i = bucket_of(pl->n_buckets, p->pid) + 1;
	}
	for (; i < pl->n_buckets; i++)
		if (pl->buckets[i])
			return &pl->buckets[i]->p;
	return NULL;
}

static void grow(struct placements *pl) {
	size_t n = pl->n_buckets * 2;
	struct entry **b = calloc(n, sizeof(*b));

	/* Growing is an optimisation: without memory the chains grow longer. */
	if (!b)
		return;
	for (size_t i = 0; i < pl->n_buckets; i++)
		for (struct entry *e = pl->buckets[i], *next; e; e = next) {
			size_t k = bucket_of(n, e->p.pid);
			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	free(pl->buckets);
	pl->buckets = b;
	pl->n_buckets = n;
}

void placements_remove(struct placements *pl, pid_t pid) {
	for (struct entry **pe = &pl->buckets[bucket_of(pl->n_buckets, pid)]; *pe; pe = &(*pe)->next) {
		struct entry *e = *pe;
		if (e->p.pid == pid) {
			*pe = e->next;
			entry_free(e);
			pl->size--;
			if (pl->observer)
				pl->observer(pl->observer_data, pid, false);
			return;
		}
	}
}

/* Nothing is owed to a process that is gone, and an entry of the ledger
 * for it is harmless (it names a start time that no process has any more):
 * the next sync drops it, not a write per exit. Exits are taken in one
 * system call each interval, not a wake-up each: a process that exec'd,
 * was pinned and is gone (a compiler, a script's commands) costs ccxd only
 * its exec. Until then, the entry's pidfd keeps its pid from being mistaken
 * for another process's. */
size_t placements_reap(struct placements *pl) {
	struct epoll_event events[64];
	size_t reaped = 0;
	int n;

	do {
		n = epoll_wait(pl->exits, events, 64, 0);
		for (int i = 0; i < n; i++)
			placements_remove(pl, (pid_t)events[i].data.u64);
		reaped += n > 0 ? (size_t)n : 0;
	} while (n == 64);
	return reaped;
}

/* A new entry for st's process, behind pidfd (which it takes over). */
static struct placement *add(struct placements *pl, const struct procfs_stat *st, int fd) {
	struct placement *p;
	struct entry *e = calloc(1, sizeof(*e));

	if (!e) {
		close(fd);
		log_error("Out of memory for the table of placements");
		errno = ENOMEM;
		return NULL;
	}
	p = &e->p;
	p->pid = st->pid;
	p->start_time = st->start_time;
	p->pidfd = fd;
	p->state = PLACEMENT_SKIPPED;
	p->owner = PLACEMENT_RULE;
	memcpy(p->comm, st->comm, sizeof(p->comm));
	if (epoll_ctl(pl->exits, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN, .data.u64 = (uint64_t)p->pid }) < 0)
		log_warning_errno(-errno, "Failed to watch %s[%d] for its exit; its next event will notice: %m",
				  p->comm, (int)p->pid);
	if (pl->size >= pl->n_buckets)
		grow(pl);
	e->next = pl->buckets[bucket_of(pl->n_buckets, p->pid)];
	pl->buckets[bucket_of(pl->n_buckets, p->pid)] = e;
	pl->size++;
	if (pl->observer)
		pl->observer(pl->observer_data, p->pid, true);
	return p;
}

const struct placement *placements_track(struct placements *pl, const struct procfs_stat *st) {
	struct placement *p = placements_entry(placements_get(pl, st->pid));
	int fd;

	if (p && p->start_time == st->start_time) {
		memcpy(p->comm, st->comm, sizeof(p->comm));
		return p;
	}
	if (p)
		placements_remove(pl, st->pid);   /* the pid was reused behind our back */
	fd = actuator_open(pl->root, st->pid, st->start_time);
	if (fd < 0) {
		errno = ESRCH;
		return NULL;
	}
	return add(pl, st, fd);
}

int placements_entry_set_rule(struct placement *p, const char *rule) {
	char *copy = NULL;

	if (rule && !(copy = strdup(rule)))
		return -ENOMEM;
	free(p->rule);
	p->rule = copy;
	return 0;
}

int placements_rule(struct placements *pl, const struct placement *p, const char *rule) {
	struct placement *e = placements_entry(p);

	(void)pl;
	e->owner = PLACEMENT_RULE;
	e->inherited_from = 0;
	return placements_entry_set_rule(e, rule);
}

/* Takes ownership of tids (n, in any order): the threads given a set, and
 * no other. */
static void set_spread_placed(struct placement *p, pid_t *tids, size_t n) {
	if (tids && n > 1)
		qsort(tids, n, sizeof(*tids), util_compare_pid);
	free(p->spread_placed);
	p->spread_placed = tids;
	p->n_spread_placed = p->allocated_spread_placed = tids ? n : 0;
}

static bool spread_placed(const struct placement *p, pid_t tid) {
	return p->n_spread_placed && bsearch(&tid, p->spread_placed, p->n_spread_placed, sizeof(tid), util_compare_pid);
}

static void set_spread(struct placement *p, cpu_set_t *sets, size_t n) {
	free(p->spread);
	p->spread = sets;
	p->n_spread = sets ? n : 0;
	p->spread_next = 0;
	set_spread_placed(p, NULL, 0);
}

void placements_set_spread(struct placements *pl, const struct placement *p, cpu_set_t *sets, size_t n) {
	(void)pl;
	set_spread(placements_entry(p), sets, n);
}

void placements_set_reason(struct placements *pl, const struct placement *p, const char *fmt, ...) {
	va_list ap;

	(void)pl;
	va_start(ap, fmt);
	vsnprintf(placements_entry(p)->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

int placements_original_of(const struct placement *p, cpu_set_t *ret) {
	if (p->have_original && (p->state == PLACEMENT_PINNED || p->owner == PLACEMENT_AUTO)) {
		*ret = p->original;   /* what an earlier owner kept is the process's own */
		return 0;
	}
	return placements_affinity(p->pid, ret);
}

int placements_affinity(pid_t pid, cpu_set_t *ret) {
	return actuator_get(pid, ret) < 0 ? -ESRCH : 0;
}

int placements_claim(struct placements *pl, const struct placement *entry, enum placement_owner owner,
		     const char *rule, const cpu_set_t *allowed, bool force, const cpu_set_t *known) {
	struct placement *p = placements_entry(entry);
	cpu_set_t current;
	int r;

	(void)pl;
	if (known)
		current = *known;
	else if (placements_original_of(p, &current) < 0)
		return -ESRCH;
	/* Narrower than everything it may use: somebody chose that by hand. */
	if (!cpulist_is_subset(allowed, &current) && !force)
		return -EPERM;
	r = placements_entry_set_rule(p, owner == PLACEMENT_RULE ? rule : NULL);
	if (r < 0)
		return r;
	p->owner = owner;
	p->original = current;
	p->have_original = true;
	p->inherited_from = 0;
	return 0;
}

static void pinned(struct placements *pl, struct placement *p, const cpu_set_t *cpus) {
	p->cpus = *cpus;
	p->state = PLACEMENT_PINNED;
	pl->stats.pins++;
	placements_owe_changed(pl);
}

int placements_pin(struct placements *pl, const struct placement *entry, const cpu_set_t *cpus) {
	struct placement *p = placements_entry(entry);
	int r;

	/* Owed from the moment it is set, whenever ccxd dies. */
	placements_note_owed(pl, p, cpus);
	p->cpus = *cpus;
	if (p->n_spread > 0) {
		pid_t *placed;
		size_t n_placed;
		r = actuator_apply_each(pl->root, p->pid, p->pidfd, p->spread, p->n_spread, &p->spread_next, &placed,
					&n_placed);
		set_spread_placed(p, placed, n_placed);
	} else
		r = actuator_apply(pl->root, p->pid, p->pidfd, cpus);
	if (r == -ESRCH)
		return r;
	if (r < 0) {
		char list[CPULIST_MAX];
		pl->stats.pin_failures++;
		return log_warning_errno(r, "Failed to set the affinity of %s[%d] to %s: %m", p->comm, (int)p->pid,
					 cpulist_format(cpus, list, sizeof(list)));
	}
	pinned(pl, p, cpus);
	return 0;
}

void placements_decide(struct placements *pl, const struct placement *entry, enum placement_state state,
		       const cpu_set_t *cpus) {
	struct placement *p = placements_entry(entry);

	(void)pl;
	p->state = state;
	if (cpus)
		p->cpus = *cpus;
}

int placements_give_back(struct placements *pl, const struct placement *entry) {
	struct placement *p = placements_entry(entry);
	int r;

	if (p->state != PLACEMENT_PINNED || !p->have_original)
		return 0;
	r = actuator_apply(pl->root, p->pid, p->pidfd, &p->original);
	if (r == -ESRCH)
		return r;
	if (r < 0)
		return log_warning_errno(r, "Failed to restore the affinity of %s[%d]: %m", p->comm, (int)p->pid);
	set_spread(p, NULL, 0);
	p->state = PLACEMENT_SKIPPED;
	pl->stats.restores++;
	placements_owe_changed(pl);
	return 0;
}

int placements_release(struct placements *pl, const struct placement *p) {
	int r = placements_give_back(pl, p);

	if (r < 0)
		return r;
	placements_entry(p)->state = PLACEMENT_RELEASED;
	placements_set_reason(pl, p, "released by hand; left alone until it executes a new program");
	placements_owe_changed(pl);   /* left alone across a restart too */
	return 0;
}

/* ---- the pin at exec --------------------------------------------------- */

int placements_pin_early(struct placements *pl, pid_t pid, const cpu_set_t *expected, const cpu_set_t *cpus,
			 const struct placement_seen *seen) {
	cpu_set_t current;
	int fd = -1, r = 0;

	placements_settle_early(pl);
	if (seen)
		CPU_AND(&current, &seen->mask, expected);   /* as sched_getaffinity() gives it: the CPUs up */
	else if ((fd = pidfd_open(pid, 0)) < 0)
		return -errno;
	else if (actuator_get(pid, &current) < 0)
		r = -ESRCH;
	if (r == 0 && !CPU_EQUAL(&current, expected))
		r = -ESTALE;
	/* The main thread alone, at once: the threads it makes inherit it, and
	 * those made already are the full decision's. */
	if (r == 0)
		r = actuator_apply_main(pid, cpus);
	if (r == 0 && fd < 0 && (fd = pidfd_open(pid, 0)) < 0) {
		r = -errno;
		/* Not gone, but not to be held (out of descriptors): not kept. */
		if (r != -ESRCH)
			actuator_apply_main(pid, &current);
	}
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	pl->early = (struct placement_early){ .pid = pid, .original = current, .cpus = *cpus,
					      .start_time = seen ? seen->start_time : 0 };
	pl->early_pidfd = fd;
	return 0;
}

const struct placement_early *placements_early(const struct placements *pl) {
	return pl->early.pid ? &pl->early : NULL;
}

const struct placement *placements_track_early(struct placements *pl, const struct procfs_stat *st) {
	const struct placement *p;

	/* Alive now, the pidfd's process had the pid all along since it was
	 * opened: st, read in between, is its own. Identified by its inode,
	 * it is the record's, alive or not (its exit is watched next). */
	if (!pl->early.pid || st->pid != pl->early.pid || pl->early_pidfd < 0 || placements_get(pl, st->pid) ||
	    (pl->early.start_time && st->start_time != pl->early.start_time) ||
	    (!pl->early.identified && !actuator_alive(pl->early_pidfd))) {
		errno = ESRCH;
		return NULL;
	}
	p = add(pl, st, pl->early_pidfd);
	if (p)
		pl->early_pidfd = -1;   /* the entry's now */
	return p;
}

int placements_early_stat(struct placements *pl, pid_t pid, const struct placement_seen *seen, bool pinned_first,
			  struct procfs_stat *ret) {
	struct stat fd;

	/* On 32-bit machines pidfs gives the inode's low half. */
	if (!pinned_first || !seen || !seen->pid_ino || !seen->comm[0] || !pl->early.pid || pl->early.pid != pid ||
	    pl->early_pidfd < 0 || seen->start_time != pl->early.start_time || fstat(pl->early_pidfd, &fd) < 0 ||
	    (unsigned long)fd.st_ino != (unsigned long)seen->pid_ino)
		return -ESTALE;
	/* As the exec named the task: past de_thread(), one thread, no
	 * kernel thread's; state and times are not the decision's. */
	*ret = (struct procfs_stat){ .pid = pid, .state = 'R', .ppid = seen->ppid, .threads = 1,
				     .start_time = seen->start_time, .processor = -1 };
	memcpy(ret->comm, seen->comm, sizeof(ret->comm));
	ret->comm[sizeof(ret->comm) - 1] = '\0';
	pl->early.identified = true;
	return 0;
}

bool placements_confirm_early(struct placements *pl, const struct placement *p, const struct procfs_stat *st,
			      const cpu_set_t *cpus) {
	if (!pl->early.pid || p->pid != pl->early.pid || st->threads != 1 || p->n_spread > 0 ||
	    !CPU_EQUAL(cpus, &pl->early.cpus))
		return false;
	placements_note_owed(pl, p, cpus);
	pinned(pl, placements_entry(p), cpus);
	return true;
}

void placements_settle_early(struct placements *pl) {
	const struct placement *p = pl->early.pid ? placements_get(pl, pl->early.pid) : NULL;
	/* The entry took the pidfd over when it was made for this process. */
	int fd = pl->early_pidfd >= 0 ? pl->early_pidfd : p ? p->pidfd : -1;

	cpu_set_t now;

	if (!pl->early.pid)
		return;
	if (fd >= 0 && !(p && p->state == PLACEMENT_PINNED) && actuator_get(pl->early.pid, &now) == 0 &&
	    actuator_alive(fd) && CPU_EQUAL(&now, &pl->early.cpus) &&
	    actuator_apply(pl->root, pl->early.pid, fd, &pl->early.original) == 0)
		log_debug("Took back the early pin of %d: the rules did not keep it", (int)pl->early.pid);
	if (pl->early_pidfd >= 0)
		close(pl->early_pidfd);
	pl->early = (struct placement_early){ .pid = 0 };
	pl->early_pidfd = -1;
}

/* ---- children ---------------------------------------------------------- */

const struct placement *placements_inherit(struct placements *pl, const struct procfs_stat *st,
					   const struct placement *parent) {
	struct placement *child = placements_entry(placements_track(pl, st));

	if (!child)
		return NULL;
	child->owner = parent->owner;
	child->state = parent->state;
	child->original = parent->original;
	child->have_original = parent->have_original;
	child->cpus = parent->cpus;
	child->inherited_from = parent->pid;
	if (parent->n_spread > 0) {
		cpu_set_t *sets = malloc(parent->n_spread * sizeof(*sets));
		if (sets)
			memcpy(sets, parent->spread, parent->n_spread * sizeof(*sets));
		set_spread(child, sets, sets ? parent->n_spread : 0);
	}
	placements_entry_set_rule(child, parent->rule);
	placements_set_reason(pl, child, "inherited from %s[%d]", parent->comm, (int)parent->pid);
	if (child->state == PLACEMENT_PINNED)
		placements_owe_changed(pl);
	return child;
}

/* A rule's or a hand's: placements that follow a process's descendants. */
static bool follows_children(const struct placement *p) {
	return p->owner != PLACEMENT_AUTO && p->state == PLACEMENT_PINNED;
}

bool placements_adopt_if_inherited(struct placements *pl, const struct procfs_stat *st) {
	const struct placement *parent = placements_get(pl, st->ppid), *child;
	cpu_set_t current;

	if (!parent || !follows_children(parent) || actuator_get(st->pid, &current) < 0)
		return false;
	if (!CPU_EQUAL(&current, &parent->cpus) && !(parent->have_original && CPU_EQUAL(&current, &parent->original)))
		return false;
	child = placements_inherit(pl, st, parent);
	if (!child)
		return false;
	if (!CPU_EQUAL(&current, &child->cpus) && placements_pin(pl, child, &child->cpus) == -ESRCH) {
		placements_remove(pl, st->pid);
		return false;
	}
	return true;
}

/* A child of a pinned process, not known yet: adopted if it inherited the
 * placement, and then its own children are looked at too. */
static bool adopt_child(void *userdata, pid_t pid) {
	struct placements *pl = userdata;
	struct procfs_stat st;

	return !placements_get(pl, pid) && procfs_read_stat(pl->root, pid, &st) >= 0 &&
	       placements_adopt_if_inherited(pl, &st);
}

/* The pids of the entries that pass keep, into a fresh array. */
static pid_t *pids_where(const struct placements *pl, bool (*keep)(const struct placement *), size_t *n) {
	pid_t *pids = malloc((pl->size + 1) * sizeof(*pids));

	*n = 0;
	for (const struct placement *p = placements_next(pl, NULL); pids && p; p = placements_next(pl, p))
		if (keep(p))
			pids[(*n)++] = p->pid;
	return pids;
}

static bool any(const struct placement *p) {
	(void)p;
	return true;
}

pid_t *placements_pids(const struct placements *pl, size_t *n) {
	return pids_where(pl, any, n);
}

void placements_adopt_children(struct placements *pl) {
	size_t n;
	pid_t *pinned = pids_where(pl, follows_children, &n);

	if (pinned)
		procfs_walk_children(pl->root, pinned, n, adopt_child, pl);
	else
		log_warning("Out of memory: children of pinned processes are looked at next interval");
	free(pinned);
}

struct seat_walk {
	struct placements *pl;
	const struct placement *member;
	bool (*in_group)(void *, pid_t);
	void *userdata;
};

/* Gives pid the member's original if it still has the seat it inherited
 * from the member. true when it had it, and so may have passed it on to its
 * own children. */
static bool return_seat(void *userdata, pid_t pid) {
	struct seat_walk *w = userdata;
	const struct placement *mb = w->member;
	struct procfs_stat st;
	cpu_set_t current;
	int fd, r;

	if (placements_get(w->pl, pid) || (w->in_group && w->in_group(w->userdata, pid)))
		return false;   /* its placement is decided elsewhere */
	if (procfs_read_stat(w->pl->root, pid, &st) < 0)
		return false;
	fd = actuator_open(w->pl->root, pid, st.start_time);
	if (fd < 0)
		return false;
	if (actuator_get(pid, &current) < 0 || !CPU_EQUAL(&current, &mb->cpus)) {
		close(fd);
		return false;
	}
	r = actuator_apply(w->pl->root, pid, fd, &mb->original);
	close(fd);
	if (r < 0) {
		if (r != -ESRCH)
			log_warning_errno(r, "Failed to restore the affinity of process %d: %m", (int)pid);
		return false;
	}
	log_debug("%s[%d] had inherited the placement of %s[%d]: its original is back", st.comm, (int)pid, mb->comm,
		  (int)mb->pid);
	return true;
}

static bool seated_member(const struct placement *p) {
	return p->owner == PLACEMENT_AUTO && p->state == PLACEMENT_PINNED && !CPU_EQUAL(&p->cpus, &p->original);
}

void placements_return_inherited(struct placements *pl, bool (*in_group)(void *userdata, pid_t pid),
				 void *userdata) {
	size_t n;
	pid_t *seated = pids_where(pl, seated_member, &n);

	for (size_t i = 0; seated && i < n; i++) {
		struct seat_walk w = { pl, placements_get(pl, seated[i]), in_group, userdata };
		if (w.member)
			procfs_walk_children(pl->root, &seated[i], 1, return_seat, &w);
	}
	free(seated);
}

/* ---- policy = spread --------------------------------------------------- */

static void spread_note(struct placement *p, pid_t tid) {
	size_t i = p->n_spread_placed;
	pid_t *grown;

	if (spread_placed(p, tid))
		return;
	grown = util_grow(p->spread_placed, &p->allocated_spread_placed, p->n_spread_placed + 1, sizeof(*grown));
	if (!grown)
		return;   /* it may be given a set again: harmless */
	for (; i > 0 && grown[i - 1] > tid; i--)   /* kept sorted */
		grown[i] = grown[i - 1];
	grown[i] = tid;
	p->spread_placed = grown;
	p->n_spread_placed++;
}

void placements_spread_thread(struct placements *pl, const struct placement *entry, pid_t tid) {
	struct placement *p = placements_entry(entry);

	(void)pl;
	if (p->state != PLACEMENT_PINNED || p->n_spread == 0 || spread_placed(p, tid))
		return;
	actuator_apply_thread(p->pidfd, tid, &p->spread[p->spread_next++ % p->n_spread]);
	spread_note(p, tid);
}

void placements_spread_catch_up(struct placements *pl, const struct placement *entry) {
	struct placement *p = placements_entry(entry);
	pid_t *tasks;
	size_t n;

	if (procfs_list_tasks(pl->root, p->pid, &tasks, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (!spread_placed(p, tasks[i]))
			actuator_apply_thread(p->pidfd, tasks[i], &p->spread[p->spread_next++ % p->n_spread]);
	set_spread_placed(p, tasks, n);   /* those that ended are forgotten */
}

struct placements_stats placements_stats(const struct placements *pl) {
	return pl->stats;
}
